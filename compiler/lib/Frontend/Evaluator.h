//===- Evaluator.h - Compile-time evaluation of an algorithm ----*- C++ -*-===//
//
// The Evaluator walks the algorithm's AST once for a given rank count,
// running every loop, condition and call at compile time, and appends the
// operations it meets to the thread block of the enclosing `on` block. What
// comes out is a mscclc::Program.
//
// Errors: an error inside an expression turns its value into Poison, which
// silently poisons everything computed from it, so one mistake gives one
// message; the statement is dropped and evaluation goes on with the next one
// so that independent mistakes are all reported. At most one error is
// reported per source location (a bad chunk inside a loop over ranks is one
// message, not N). Exceeding a limit (steps, call depth, operations) or a
// failed `require` stops evaluation altogether.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_LIB_FRONTEND_EVALUATOR_H
#define MSCCLC_LIB_FRONTEND_EVALUATOR_H

#include "Builtins.h"

#include "mscclc/Frontend/AST.h"
#include "mscclc/Frontend/Diagnostics.h"
#include "mscclc/Frontend/Frontend.h"
#include "mscclc/Frontend/Program.h"
#include "mscclc/runtime/Limits.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <deque>
#include <map>
#include <optional>
#include <tuple>

namespace mscclc {
namespace detail {

/// Evaluation limits (language.md, "Statements").
constexpr int64_t kMaxSteps = 10'000'000;
constexpr unsigned kMaxCallDepth = 256;
constexpr int64_t kMaxOperations = 1'000'000;
/// Recursion of the evaluator itself (expressions and statements across all
/// active calls); keeps deep expressions inside deep recursion off the
/// limits of the C++ stack.
constexpr unsigned kMaxEvalNesting = 4096;
/// The runtime's limit (Limits.h): a program of more ranks could never run.
constexpr int64_t kMaxRanks = limits::kMaxRanks;
constexpr int64_t kMaxThreadBlocks = 4096;
constexpr int64_t kMaxBufferChunks = int64_t(1) << 24;
constexpr int64_t kMaxChannelId = 1 << 16;

/// A buffer as the evaluator knows it: its chunk count, and for scratch
/// buffers how they have been written so far (a buffer is either a packet
/// buffer, written by LL puts, or a plain one).
struct BufferInfo {
  enum class Kind { Input, Output, Scratch };
  enum class Writes { None, Packet, Plain };

  BufferInfo(std::string name, Kind kind, int64_t chunks)
      : name(std::move(name)), kind(kind), chunks(chunks) {}

  std::string name;
  Kind kind;
  int64_t chunks = 0;
  size_t scratchIndex = 0; // into Program::scratch
  Writes writes = Writes::None;
  mlir::LocationAttr firstWrite;
};

/// A channel as a value: what `memory(...)`, `port(...)` and `switch(...)`
/// evaluate to. It becomes part of the Program when an operation uses it.
struct ChannelValue {
  ChannelKind kind = ChannelKind::Memory;
  Protocol protocol = Protocol::None;
  int64_t src = 0, dst = 0;    // point to point
  int64_t first = 0, last = 0; // switch: ranks first..last-1
  int64_t id = 0;

  auto key() const {
    return std::make_tuple(int(kind), int(protocol), src, dst, first, last, id);
  }
};

/// A run-time value of the compile-time language.
struct Value {
  enum class Kind : uint8_t { Poison, None, Int, Buffer, Chunk, Channel };

  Kind kind = Kind::Poison;
  int64_t i = 0;                          // Int
  BufferInfo *buffer = nullptr;           // Buffer, Chunk
  int64_t rank = 0, index = 0, count = 0; // Chunk, after alias rewriting
  int64_t writtenIndex = 0;      // Chunk: the index before alias rewriting
  std::optional<int64_t> except; // Chunk: a reduce source's excluded chunk
  ChannelValue channel;          // Channel
  mlir::LocationAttr loc;        // Chunk, Channel: where it was written

  static Value poison() { return Value(); }
  static Value none() {
    Value v;
    v.kind = Kind::None;
    return v;
  }
  static Value integer(int64_t i) {
    Value v;
    v.kind = Kind::Int;
    v.i = i;
    return v;
  }
  bool isPoison() const { return kind == Kind::Poison; }
};

/// "an integer", "a channel", ... for type errors.
llvm::StringRef describe(Value::Kind kind);

class Evaluator {
public:
  Evaluator(const ast::Module &module, const FrontendOptions &opts,
            DiagReporter &diag);
  std::optional<Program> run();

private:
  enum class Flow { Normal, Return, Stop };

  /// The `on` block being evaluated.
  struct OnContext {
    int64_t rank;
    int64_t tb;                   // first block of the group
    std::vector<Operation> *sink; // the thread block's ops or a pipeline body
    bool inPipeline;
  };

  /// One thread block (or group) of one rank while it is being filled.
  struct BlockState {
    ThreadBlock block;
    mlir::LocationAttr firstUse;
  };

  //===--- Setup (Evaluator.cpp) ------------------------------------------===//
  bool checkOptions();
  bool evalParams();
  bool evalHeader(const ast::AlgorithmDecl &algo);
  Program finish();

  //===--- Diagnostics ----------------------------------------------------===//
  /// Reports an error once per location, with a note at the innermost call
  /// site when inside a function.
  void error(mlir::Location loc, const llvm::Twine &msg);
  /// Reports an error that ends evaluation.
  void fatal(mlir::Location loc, const llvm::Twine &msg);
  bool stopped() const { return stop || diag.limitReached(); }
  /// Counts one evaluation step; false (after a fatal error) past the limit.
  bool step(mlir::Location loc);

  //===--- Statements (Evaluator.cpp) -------------------------------------===//
  Flow execBlock(const ast::Block &block);
  Flow execStmts(const ast::Block &block);
  Flow execStmt(const ast::Stmt &stmt);
  Flow execFor(const ast::ForStmt &s);
  Flow execIf(const ast::IfStmt &s);
  Flow execOn(const ast::OnStmt &s);
  Flow execPipeline(const ast::PipelineStmt &s);
  void execScratch(const ast::ScratchStmt &s);
  BlockState *getBlock(int64_t rank, int64_t tb, int64_t groupSize,
                       mlir::Location loc);

  //===--- Expressions (EvalExpr.cpp) -------------------------------------===//
  Value eval(const ast::Expr &expr);
  std::optional<int64_t> evalInt(const ast::Expr &expr);
  /// Converts `v` (computed from `expr`) to an integer or reports a type
  /// error; poison stays silent.
  std::optional<int64_t> toInt(const Value &v, const ast::Expr &expr);
  Value evalBinary(const ast::BinaryExpr &e);
  Value evalCall(const ast::CallExpr &e, bool asStmt);
  Value evalUserCall(const ast::CallExpr &e, const ast::FnDecl &fn);
  /// `emptyIsNoSource`: a reduce source, where an empty range `buf@r[a..a]`
  /// (a in 0..chunks) stands for no source (a chunk value of count 0).
  Value evalChunk(const ast::ChunkExpr &e, bool emptyIsNoSource = false);
  Value evalChannel(const ast::CallExpr &e, BuiltinFn kind);
  /// Checks that `rank` names a rank; reports at `expr` otherwise.
  bool checkRank(int64_t rank, const ast::Expr &expr);
  Value lookup(llvm::StringRef name, mlir::Location loc);
  void bind(llvm::StringRef name, Value v) { env.push_back({name, v}); }

  //===--- Operations (EvalOps.cpp) ---------------------------------------===//
  void evalLocalOp(const ast::CallExpr &e, BuiltinFn kind);
  void evalMethod(const ast::MethodCallExpr &e);
  /// Evaluates an operand that must be a chunk reference; `exceptOk` allows
  /// `chunks except i`.
  std::optional<Value> evalChunkOperand(const ast::Expr &expr, bool exceptOk);
  /// Evaluates every argument as a chunk operand (all of them, so each bad
  /// one is reported); with `sourcesMayExcept`, every argument after the
  /// destination may be `chunks except i`. Returns nullopt after any error.
  std::optional<std::vector<Value>>
  evalChunkOperands(llvm::ArrayRef<std::unique_ptr<ast::Expr>> args,
                    bool sourcesMayExcept);
  /// Splits reduce sources into destination-sized pieces, dropping excluded
  /// chunks.
  bool expandSources(const Value &dst, llvm::ArrayRef<Value> srcs,
                     std::vector<Value> &pieces);
  bool checkOnRank(const Value &chunk, int64_t rank, llvm::StringRef role,
                   llvm::StringRef why);
  bool checkSameCount(const Value &dst, const Value &src);
  /// Records that `chunk` is written (by an LL put when `packet`); false
  /// after an error.
  bool noteWrite(const Value &chunk, bool packet, mlir::Location opLoc);
  std::string channelName(const ChannelValue &ch) const;
  /// Adds the channel to the program on first use and checks that only
  /// one thread block uses it; returns its name, or nullopt after an error.
  std::optional<std::string> useChannel(const ChannelValue &ch,
                                        mlir::LocationAttr chLoc,
                                        mlir::Location opLoc);
  /// Checks, once all writes are known, that packet buffers are only read
  /// where LL packets can be read.
  void checkPacketReads(const std::vector<Operation> &ops);
  ChunkRef toRef(const Value &chunk) const;
  void emit(Operation op);

  const ast::Module &module;
  const FrontendOptions &opts;
  DiagReporter &diag;
  mlir::MLIRContext &ctx;
  Program prog;

  // Collective shape.
  int64_t ranks = 0, gpusPerNode = 0, chunks = 1;
  Collective collective = Collective::AllReduce;
  bool inPlace = false;
  std::deque<BufferInfo> buffers; // stable addresses; [0] input, [1] output

  // Names.
  struct Binding {
    llvm::StringRef name;
    Value value;
  };
  std::vector<Binding> env; // lets and loop variables, innermost last
  size_t frameBase = 0;     // lookups stop here (a function's own frame)
  llvm::StringMap<Value> globals;
  llvm::StringMap<const ast::FnDecl *> fns;

  // State of the walk.
  std::optional<OnContext> on;
  std::vector<mlir::Location> callSites;
  std::optional<Value> returnValue;
  int64_t steps = 0, numOps = 0;
  unsigned nesting = 0;
  bool stop = false;
  llvm::DenseSet<mlir::Attribute> reported; // locations already reported

  // Results.
  std::vector<std::map<int64_t, BlockState>> blocks; // per rank, by tb id
  std::map<decltype(ChannelValue().key()), size_t> channelIndex;
  /// The thread block that uses each channel (by index), and where it first
  /// did: a channel's semaphores belong to one block.
  std::vector<std::pair<int64_t, mlir::LocationAttr>> channelUser;
};

} // namespace detail
} // namespace mscclc

#endif // MSCCLC_LIB_FRONTEND_EVALUATOR_H
