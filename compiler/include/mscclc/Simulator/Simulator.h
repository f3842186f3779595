//===- Simulator.h - Runs an mscl.program on the CPU ----------*- C++ -*-===//
//
// The simulator executes the post-pass `mscl.program` (the IR the CUDA
// backend consumes) with real data on every rank, one task per thread block,
// under seeded adversarial schedules, and checks the final buffers against a
// reference of the declared collective. docs/simulator.md describes the
// model; docs/execution-model.md fixes the semantics it implements.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_SIMULATOR_SIMULATOR_H
#define MSCCLC_SIMULATOR_SIMULATOR_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mscl {
class ProgramOp;
} // namespace mscl

namespace mscclc {
namespace sim {

/// Element types the simulator computes in (each rounds like the GPU type):
/// the floor's data types (mscclc/floor/DataTypes.def), in its order and
/// under its names. f8e4m3 and f8e5m2 are the OCP fp8 formats (NCCL's
/// ncclFloat8e4m3 and ncclFloat8e5m2, CUDA's __nv_fp8_e4m3 and
/// __nv_fp8_e5m2).
enum class DataType {
#define MSCCLC_DATA_TYPE(Id, name, ...) name,
#include "mscclc/floor/DataTypes.def"
};
/// The run-time reduction operator: the floor's (mscclc/floor/RedOps.def)
/// but premulsum, in its order (checked in Arith.cpp).
enum class ReduceKind { sum, prod, min, max, avg };

std::optional<DataType> parseDataType(llvm::StringRef name);
std::optional<ReduceKind> parseReduceKind(llvm::StringRef name);
llvm::StringRef stringify(DataType type);
llvm::StringRef stringify(ReduceKind kind);
/// Every canonical name, comma-separated, for messages.
std::string acceptedDataTypes();
std::string acceptedReduceKinds();
/// Size of one element in bytes.
int64_t byteSize(DataType type);

/// Latency (microseconds) and bandwidth (GB/s = 1e9 bytes/s) of every kind
/// of transfer; the estimate is a discrete-event run with these costs.
/// Defaults are H100/H200 figures from the project's reference numbers.
struct CostModel {
  double memHBLatency = 0.6;   ///< HB memory-channel put (NVLink stores)
  double memHBBandwidth = 369; ///< SM-driven peer copy
  double memLLLatency = 0.4;   ///< LL packet put, flags included
  double memLLBandwidth = 184; ///< half the HB figure: packets double bytes
  double portLatency = 0.83;   ///< copy engine / proxy, inside a node
  double portBandwidth = 395.6;
  double netLatency = 4.89;    ///< port channel across nodes (RDMA)
  double netBandwidth = 48.9;  ///< one NIC, each way
  /// GPUs of a node that share one NIC (1: a NIC per GPU, as on DGX
  /// H100/H200). Transfers across nodes queue on the sender's and the
  /// receiver's NIC, so concurrent ones share its bandwidth.
  double gpusPerNic = 1;
  double signalLatency = 0.63; ///< half the measured flag round trip
  double switchLatency = 1.0;  ///< multimem ld_reduce / st through NVSwitch
  double switchBandwidth = 320;
  double localLatency = 0.05;  ///< local copy / reduce in device memory
  double localBandwidth = 3000;
  double blockBandwidth = 200; ///< most one thread block moves per second
  double opOverhead = 0.02;    ///< issue cost of any operation

  /// All keys with their current values, for messages and docs.
  std::vector<std::pair<std::string, double>> entries() const;
};

/// Applies a cost model, the text of a JSON object `{"key": value, ...}`
/// read from `name`, on top of `model`. Returns an error message or "".
std::string parseCostModel(llvm::StringRef text, llvm::StringRef name,
                           CostModel &model);
/// Applies `key=value` to `model`. Returns an error message or "".
std::string applyCostOverride(llvm::StringRef keyValue, CostModel &model);

struct SimulationOptions {
  uint64_t seed = 1;
  /// Schedule 0 is the cost-model (timed) schedule; the others are random
  /// adversarial interleavings.
  int64_t schedules = 50;
  /// After the single-launch schedules, a round of back-to-back launches
  /// with one rank slowed down (mscclc --single-launch turns it off).
  bool acrossLaunches = true;
  DataType dataType = DataType::f32;
  ReduceKind reduceKind = ReduceKind::sum;
  /// Message sizes in bytes, as nccl-tests counts them (the per-rank
  /// buffer: count x size for allreduce/broadcast, the gathered buffer for
  /// allgather/reducescatter/alltoall). Empty: a default set.
  std::vector<int64_t> sizes;
  /// Where to write a Chrome trace of the timed schedule of the largest
  /// size; empty for none.
  std::string tracePath;
  CostModel cost;
};

/// Simulates `program` for every size and schedule of `options`. Failures
/// are reported through the context's diagnostic engine at the location of
/// the operation at fault; the verdict goes to `report`. Fails if any
/// schedule failed.
mlir::LogicalResult simulate(mscl::ProgramOp program,
                             const SimulationOptions &options,
                             llvm::raw_ostream &report);

/// Writes the program's data flow as a Graphviz digraph: a cluster per rank
/// and thread block, a node per operation, edges for program order, data
/// (writer to reader of overlapping chunks) and signal to wait.
void emitDot(mscl::ProgramOp program, llvm::raw_ostream &os);

/// Parses a size such as `4096`, `64K`, `1M`, `1MB` or `2G` (powers of
/// 1024). Returns nullopt on bad input.
std::optional<int64_t> parseByteSize(llvm::StringRef text);

} // namespace sim
} // namespace mscclc

#endif // MSCCLC_SIMULATOR_SIMULATOR_H
