//===- Builtins.h - Names the language predefines --------------*- C++ -*-===//
//
// Built-in values, buffers, functions and channel operations, with their
// arities: the one list of the names the language predefines. Sema checks
// declarations and calls against it before anything runs; the Evaluator
// dispatches on the same enums.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_LIB_FRONTEND_BUILTINS_H
#define MSCCLC_LIB_FRONTEND_BUILTINS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"

#include <limits>
#include <optional>

namespace mscclc {

/// Values every program sees (the Evaluator binds each); none of them may be
/// redefined.
constexpr llvm::StringLiteral kBuiltinValues[] = {
    "nranks", "gpus_per_node", "nnodes", "instances", "inplace"};
/// Buffers every program sees.
constexpr llvm::StringLiteral kBuiltinBuffers[] = {"input", "output"};

enum class BuiltinFn {
  Node,
  Local,
  Min,
  Max,
  Memory,
  Port,
  Switch,
  Copy,
  Reduce,
  Barrier
};

inline std::optional<BuiltinFn> lookupBuiltinFn(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<BuiltinFn>>(name)
      .Case("node", BuiltinFn::Node)
      .Case("local", BuiltinFn::Local)
      .Case("min", BuiltinFn::Min)
      .Case("max", BuiltinFn::Max)
      .Case("memory", BuiltinFn::Memory)
      .Case("port", BuiltinFn::Port)
      .Case("switch", BuiltinFn::Switch)
      .Case("copy", BuiltinFn::Copy)
      .Case("reduce", BuiltinFn::Reduce)
      .Case("barrier", BuiltinFn::Barrier)
      .Default(std::nullopt);
}

/// Local operations: they emit an operation and have no value.
inline bool isOperation(BuiltinFn fn) {
  return fn == BuiltinFn::Copy || fn == BuiltinFn::Reduce ||
         fn == BuiltinFn::Barrier;
}

enum class ChannelMethod {
  Put,
  PutSignal,
  PutSignalFlush,
  Get,
  Signal,
  Wait,
  Flush,
  ReadReduce,
  ReducePut,
  SwitchReduce,
  SwitchBroadcast
};

inline std::optional<ChannelMethod> lookupMethod(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ChannelMethod>>(name)
      .Case("put", ChannelMethod::Put)
      .Case("put_signal", ChannelMethod::PutSignal)
      .Case("put_signal_flush", ChannelMethod::PutSignalFlush)
      .Cases({"get", "read"}, ChannelMethod::Get)
      .Case("signal", ChannelMethod::Signal)
      .Case("wait", ChannelMethod::Wait)
      .Case("flush", ChannelMethod::Flush)
      .Case("read_reduce", ChannelMethod::ReadReduce)
      .Case("reduce_put", ChannelMethod::ReducePut)
      .Case("reduce", ChannelMethod::SwitchReduce)
      .Case("broadcast", ChannelMethod::SwitchBroadcast)
      .Default(std::nullopt);
}

/// Number of arguments a built-in accepts.
struct Arity {
  unsigned min, max;
};
constexpr unsigned kVariadic = std::numeric_limits<unsigned>::max();

inline Arity arity(BuiltinFn fn) {
  switch (fn) {
  case BuiltinFn::Node:
  case BuiltinFn::Local:
    return {1, 1};
  case BuiltinFn::Min:
  case BuiltinFn::Max:
  case BuiltinFn::Copy:
    return {2, 2};
  case BuiltinFn::Memory:
    return {3, 4}; // src, dst, protocol [, id]
  case BuiltinFn::Port:
    return {2, 3}; // src, dst [, id]
  case BuiltinFn::Switch:
    return {1, 2}; // a..b [, id]
  case BuiltinFn::Reduce:
    return {2, kVariadic};
  case BuiltinFn::Barrier:
    return {0, 0};
  }
  return {0, 0};
}

inline Arity arity(ChannelMethod m) {
  switch (m) {
  case ChannelMethod::Signal:
  case ChannelMethod::Wait:
  case ChannelMethod::Flush:
    return {0, 0};
  case ChannelMethod::ReducePut:
    return {2, kVariadic};
  default:
    return {2, 2};
  }
}

} // namespace mscclc

#endif // MSCCLC_LIB_FRONTEND_BUILTINS_H
