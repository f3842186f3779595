//===- EvalExpr.cpp - Expressions, calls, chunks and channels -------------===//
//
// Integer arithmetic is checked: overflow and division by zero are errors.
// `/` and `%` round toward negative infinity (so `(r - 1) % nranks` is the
// previous rank on a ring, also for r = 0), like Python, which the
// algorithms this language describes were first written in.
//
//===----------------------------------------------------------------------===//

#include "Evaluator.h"

#include "mscclc/floor/Shape.h"

#include "llvm/Support/MathExtras.h"

using namespace mscclc;
using namespace mscclc::detail;

llvm::StringRef mscclc::detail::describe(Value::Kind kind) {
  switch (kind) {
  case Value::Kind::Poison:
    return "an invalid value";
  case Value::Kind::None:
    return "nothing";
  case Value::Kind::Int:
    return "an integer";
  case Value::Kind::Buffer:
    return "a buffer";
  case Value::Kind::Chunk:
    return "a chunk reference";
  case Value::Kind::Channel:
    return "a channel";
  }
  return "a value";
}

std::optional<int64_t> Evaluator::toInt(const Value &v, const ast::Expr &expr) {
  if (v.kind == Value::Kind::Int)
    return v.i;
  if (!v.isPoison())
    error(expr.getLoc(), "expected an integer, found " + describe(v.kind));
  return std::nullopt;
}

std::optional<int64_t> Evaluator::evalInt(const ast::Expr &expr) {
  return toInt(eval(expr), expr);
}

bool Evaluator::checkRank(int64_t rank, const ast::Expr &expr) {
  if (rank >= 0 && rank < ranks)
    return true;
  error(expr.getLoc(), "rank " + llvm::Twine(rank) + " is out of range (0.." +
                           llvm::Twine(ranks - 1) + " with " +
                           llvm::Twine(ranks) + " ranks)");
  return false;
}

Value Evaluator::lookup(llvm::StringRef name, mlir::Location loc) {
  for (size_t i = env.size(); i > frameBase; --i)
    if (env[i - 1].name == name)
      return env[i - 1].value;
  auto it = globals.find(name);
  if (it != globals.end())
    return it->second;
  // Sema resolved the name, so this is a scratch buffer a function uses
  // before the algorithm declared it.
  error(loc, "'" + name +
                 "' is not declared yet at this point of the "
                 "evaluation");
  return Value::poison();
}

Value Evaluator::eval(const ast::Expr &expr) {
  if (stop)
    return Value::poison();
  struct Nest {
    unsigned &n;
    ~Nest() { --n; }
  } nest{++nesting};
  if (nesting > kMaxEvalNesting) {
    fatal(expr.getLoc(), "evaluation nested too deeply (more than " +
                             llvm::Twine(kMaxEvalNesting) + " levels)");
    return Value::poison();
  }

  switch (expr.getKind()) {
  case ast::Expr::Kind::Int:
    return Value::integer(llvm::cast<ast::IntExpr>(expr).value);
  case ast::Expr::Kind::Name:
    return lookup(llvm::cast<ast::NameExpr>(expr).name, expr.getLoc());
  case ast::Expr::Kind::Unary: {
    auto &e = llvm::cast<ast::UnaryExpr>(expr);
    std::optional<int64_t> v = evalInt(*e.operand);
    if (!v)
      return Value::poison();
    if (e.op == ast::UnaryOp::Not)
      return Value::integer(*v == 0);
    if (*v == std::numeric_limits<int64_t>::min()) {
      error(e.getLoc(), "integer overflow in '-'");
      return Value::poison();
    }
    return Value::integer(-*v);
  }
  case ast::Expr::Kind::Binary:
    return evalBinary(llvm::cast<ast::BinaryExpr>(expr));
  case ast::Expr::Kind::Call:
    return evalCall(llvm::cast<ast::CallExpr>(expr), /*asStmt=*/false);
  case ast::Expr::Kind::Method:
    // Sema only lets channel operations stand as statements.
    evalMethod(llvm::cast<ast::MethodCallExpr>(expr));
    return Value::none();
  case ast::Expr::Kind::Chunk:
    return evalChunk(llvm::cast<ast::ChunkExpr>(expr));
  case ast::Expr::Kind::Range:
  case ast::Expr::Kind::Except:
    // Sema only allows these as particular call arguments, which are
    // evaluated by their callers.
    error(expr.getLoc(), "a range or 'except' is not a value here");
    return Value::poison();
  }
  return Value::poison();
}

Value Evaluator::evalBinary(const ast::BinaryExpr &e) {
  using ast::BinaryOp;
  // Short-circuit, so `p != r && f(p)` guards f as in C.
  if (e.op == BinaryOp::And || e.op == BinaryOp::Or) {
    std::optional<int64_t> l = evalInt(*e.lhs);
    if (!l)
      return Value::poison();
    if ((e.op == BinaryOp::And) == (*l == 0))
      return Value::integer(e.op == BinaryOp::Or);
    std::optional<int64_t> r = evalInt(*e.rhs);
    if (!r)
      return Value::poison();
    return Value::integer(*r != 0);
  }
  std::optional<int64_t> l = evalInt(*e.lhs);
  std::optional<int64_t> r = evalInt(*e.rhs);
  if (!l || !r)
    return Value::poison();
  int64_t a = *l, b = *r, out = 0;
  auto overflow = [&]() {
    error(e.getLoc(), "integer overflow in '" + ast::spelling(e.op) + "'");
    return Value::poison();
  };
  switch (e.op) {
  case BinaryOp::Eq:
    return Value::integer(a == b);
  case BinaryOp::Ne:
    return Value::integer(a != b);
  case BinaryOp::Lt:
    return Value::integer(a < b);
  case BinaryOp::Le:
    return Value::integer(a <= b);
  case BinaryOp::Gt:
    return Value::integer(a > b);
  case BinaryOp::Ge:
    return Value::integer(a >= b);
  case BinaryOp::Add:
    if (llvm::AddOverflow(a, b, out))
      return overflow();
    return Value::integer(out);
  case BinaryOp::Sub:
    if (llvm::SubOverflow(a, b, out))
      return overflow();
    return Value::integer(out);
  case BinaryOp::Mul:
    if (llvm::MulOverflow(a, b, out))
      return overflow();
    return Value::integer(out);
  case BinaryOp::Div:
  case BinaryOp::Rem: {
    if (b == 0) {
      error(e.getLoc(),
            e.op == BinaryOp::Div ? "division by zero" : "remainder by zero");
      return Value::poison();
    }
    if (a == std::numeric_limits<int64_t>::min() && b == -1) {
      if (e.op == BinaryOp::Rem)
        return Value::integer(0);
      return overflow();
    }
    int64_t q = a / b, m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) { // floor instead of truncation
      q -= 1;
      m += b;
    }
    return Value::integer(e.op == BinaryOp::Div ? q : m);
  }
  default:
    return Value::poison();
  }
}

Value Evaluator::evalCall(const ast::CallExpr &e, bool asStmt) {
  std::optional<BuiltinFn> b = lookupBuiltinFn(e.callee);
  if (!b) {
    const ast::FnDecl *fn = fns.lookup(e.callee);
    if (!fn) { // Sema reports unknown functions; stay safe regardless.
      error(e.getLoc(), "unknown function '" + e.callee + "'");
      return Value::poison();
    }
    return evalUserCall(e, *fn);
  }
  switch (*b) {
  case BuiltinFn::Node:
  case BuiltinFn::Local: {
    std::optional<int64_t> r = evalInt(*e.args[0]);
    if (!r)
      return Value::poison();
    // Floor division, as for `/`: gpus_per_node is positive.
    int64_t q = *r / gpusPerNode, m = *r % gpusPerNode;
    if (m < 0) {
      q -= 1;
      m += gpusPerNode;
    }
    return Value::integer(*b == BuiltinFn::Node ? q : m);
  }
  case BuiltinFn::Min:
  case BuiltinFn::Max: {
    std::optional<int64_t> x = evalInt(*e.args[0]);
    std::optional<int64_t> y = evalInt(*e.args[1]);
    if (!x || !y)
      return Value::poison();
    return Value::integer(*b == BuiltinFn::Min ? std::min(*x, *y)
                                               : std::max(*x, *y));
  }
  case BuiltinFn::Memory:
  case BuiltinFn::Port:
  case BuiltinFn::Switch:
    return evalChannel(e, *b);
  case BuiltinFn::Copy:
  case BuiltinFn::Reduce:
  case BuiltinFn::Barrier:
    (void)asStmt; // Sema guarantees operations stand as statements.
    evalLocalOp(e, *b);
    return Value::none();
  }
  return Value::poison();
}

Value Evaluator::evalUserCall(const ast::CallExpr &e, const ast::FnDecl &fn) {
  std::vector<Value> args;
  for (size_t i = 0; i < e.args.size(); ++i) {
    Value v = eval(*e.args[i]);
    if (v.isPoison())
      return Value::poison();
    if (v.kind == Value::Kind::None) {
      error(e.args[i]->getLoc(), "this argument has no value");
      return Value::poison();
    }
    args.push_back(v);
  }
  if (args.size() != fn.params.size()) { // Sema reports it; stay safe
    error(e.getLoc(), "wrong number of arguments to '" + e.callee + "'");
    return Value::poison();
  }
  if (callSites.size() >= kMaxCallDepth) {
    fatal(e.getLoc(), "call depth limit of " + llvm::Twine(kMaxCallDepth) +
                          " reached in a call to '" + e.callee +
                          "' (is the recursion unbounded?)");
    return Value::poison();
  }
  if (!step(e.getLoc()))
    return Value::poison();

  // A function sees only its arguments and the globals, not its caller's
  // locals: the frame starts at the arguments.
  size_t savedBase = frameBase, mark = env.size();
  frameBase = mark;
  for (size_t i = 0; i < args.size(); ++i)
    bind(fn.params[i].name, args[i]);
  callSites.push_back(e.getLoc());
  returnValue.reset();
  Flow flow = execStmts(fn.body);
  callSites.pop_back();
  env.resize(mark);
  frameBase = savedBase;
  if (flow == Flow::Stop)
    return Value::poison();
  Value result =
      flow == Flow::Return && returnValue ? *returnValue : Value::none();
  returnValue.reset();
  return result;
}

Value Evaluator::evalChunk(const ast::ChunkExpr &e, bool emptyIsNoSource) {
  Value buf = lookup(e.buffer, e.getLoc());
  if (buf.isPoison())
    return buf;
  if (buf.kind != Value::Kind::Buffer) {
    error(e.getLoc(),
          "'" + e.buffer + "' is " + describe(buf.kind) + ", not a buffer");
    return Value::poison();
  }
  int64_t rank = 0;
  if (e.rank) {
    std::optional<int64_t> r = evalInt(*e.rank);
    if (!r)
      return Value::poison();
    rank = *r;
  } else if (on) {
    rank = on->rank;
  } else {
    error(e.getLoc(), "'" + e.buffer +
                          "[...]' outside an 'on' block needs a "
                          "rank: write '" +
                          e.buffer + "@rank[...]'");
    return Value::poison();
  }
  std::optional<int64_t> first = evalInt(*e.first);
  std::optional<int64_t> last =
      e.last ? evalInt(*e.last)
             : (first ? std::optional<int64_t>(*first + 1) : std::nullopt);
  if (!first || !last)
    return Value::poison();
  if (e.rank ? !checkRank(rank, *e.rank) : !checkRank(rank, e))
    return Value::poison();
  BufferInfo *info = buf.buffer;
  const bool noSource = emptyIsNoSource && e.last && *first == *last;
  if (*first < 0 || *last > info->chunks || (*first >= *last && !noSource)) {
    std::string what = e.last ? "chunks " + std::to_string(*first) + ".." +
                                    std::to_string(*last)
                              : "chunk " + std::to_string(*first);
    // Loops make one line stand for every rank: say which one it was.
    std::string where =
        on ? ", in 'on rank " + std::to_string(on->rank) + ", tb " +
                 std::to_string(on->tb) + "'"
           : std::string();
    bool inBounds = *first >= 0 && *last <= info->chunks && e.last;
    error(e.getLoc(), what + " of '" + info->name + "@" +
                          std::to_string(rank) + "' " +
                          (inBounds ? "is an empty range" : "is out of range") +
                          " ('" + info->name + "' has " +
                          llvm::Twine(info->chunks) + " chunk" +
                          (info->chunks == 1 ? "" : "s") + where + ")");
    return Value::poison();
  }

  Value v;
  v.kind = Value::Kind::Chunk;
  v.buffer = info;
  v.rank = rank;
  v.index = v.writtenIndex = *first;
  v.count = *last - *first;
  v.loc = e.getLoc();
  // In-place collectives have one user buffer; rewrite the alias to it
  // (language.md, "The algorithm header").
  if (inPlace) {
    BufferInfo *input = &buffers[0], *output = &buffers[1];
    switch (collectiveInfo(collective).inPlace) {
    case InPlace::Same:
      if (info == input)
        v.buffer = output;
      break;
    case InPlace::InputInOutput:
      if (info == input) {
        v.buffer = output;
        v.index += int64_t(inPlaceInputOffset(collective, chunks, rank));
      }
      break;
    case InPlace::OutputInInput:
      if (info == output) {
        v.buffer = input;
        v.index += int64_t(inPlaceOutputOffset(collective, chunks, rank));
      }
      break;
    case InPlace::Never:
      break;
    }
  }
  return v;
}

Value Evaluator::evalChannel(const ast::CallExpr &e, BuiltinFn kind) {
  ChannelValue ch;
  size_t idArg;
  if (kind == BuiltinFn::Switch) {
    auto *rangeExpr = llvm::dyn_cast<ast::RangeExpr>(e.args[0].get());
    if (!rangeExpr) { // Sema reports it; stay safe regardless.
      error(e.getLoc(), "'switch' takes a rank range 'a..b'");
      return Value::poison();
    }
    const ast::RangeExpr &range = *rangeExpr;
    std::optional<int64_t> lo = evalInt(*range.lo);
    std::optional<int64_t> hi = evalInt(*range.hi);
    if (!lo || !hi)
      return Value::poison();
    if (*lo < 0 || *hi > ranks || *hi - *lo < 2) {
      error(range.getLoc(), "a switch channel needs at least two ranks within "
                            "0.." +
                                llvm::Twine(ranks) + ", got " +
                                llvm::Twine(*lo) + ".." + llvm::Twine(*hi));
      return Value::poison();
    }
    if ((*lo / gpusPerNode) != ((*hi - 1) / gpusPerNode)) {
      error(range.getLoc(), "a switch channel connects ranks of one node; "
                            "ranks " +
                                llvm::Twine(*lo) + ".." + llvm::Twine(*hi) +
                                " span several nodes of " +
                                llvm::Twine(gpusPerNode) + " GPUs");
      return Value::poison();
    }
    ch.kind = ChannelKind::Switch;
    ch.first = *lo;
    ch.last = *hi;
    idArg = 1;
  } else {
    std::optional<int64_t> src = evalInt(*e.args[0]);
    std::optional<int64_t> dst = evalInt(*e.args[1]);
    if (!src || !dst || !checkRank(*src, *e.args[0]) ||
        !checkRank(*dst, *e.args[1]))
      return Value::poison();
    if (*src == *dst) {
      error(e.getLoc(), "a channel connects two different ranks, got " +
                            llvm::Twine(*src) + " to itself");
      return Value::poison();
    }
    ch.src = *src;
    ch.dst = *dst;
    if (kind == BuiltinFn::Memory) {
      ch.kind = ChannelKind::Memory;
      auto *proto = llvm::dyn_cast<ast::NameExpr>(e.args[2].get());
      if (!proto || (proto->name != "LL" && proto->name != "HB")) {
        error(e.args[2]->getLoc(), "expected the protocol 'LL' or 'HB'");
        return Value::poison();
      }
      ch.protocol = proto->name == "LL" ? Protocol::LL : Protocol::HB;
      if (*src / gpusPerNode != *dst / gpusPerNode) {
        error(e.getLoc(),
              "memory channels connect ranks of one node, but "
              "ranks " +
                  llvm::Twine(*src) + " and " + llvm::Twine(*dst) +
                  " are on nodes " + llvm::Twine(*src / gpusPerNode) + " and " +
                  llvm::Twine(*dst / gpusPerNode) + " (use a port channel)");
        return Value::poison();
      }
      idArg = 3;
    } else {
      ch.kind = ChannelKind::Port;
      idArg = 2;
    }
  }
  if (e.args.size() > idArg) {
    std::optional<int64_t> id = evalInt(*e.args[idArg]);
    if (!id)
      return Value::poison();
    if (*id < 0 || *id >= kMaxChannelId) {
      error(e.args[idArg]->getLoc(), "channel id " + llvm::Twine(*id) +
                                         " is out of range (0.." +
                                         llvm::Twine(kMaxChannelId - 1) + ")");
      return Value::poison();
    }
    ch.id = *id;
  }
  Value v;
  v.kind = Value::Kind::Channel;
  v.channel = ch;
  v.loc = e.getLoc();
  return v;
}
