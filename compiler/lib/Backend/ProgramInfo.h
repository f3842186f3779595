//===- ProgramInfo.h - What the CUDA backend and the plan share ----------===//
//
// One walk over an `mscl.program` collects everything the kernels and the
// runtime must agree on: buffer layout, each rank's channel arrays (the
// order of MscclcKernelArgs' arrays), the block that owns each channel, the
// reverse channel on the peer, which channels signal/wait and the wait
// counter slots. `--emit=bundle` (what the runtime runs) writes the kernels
// and the plan from one ProgramInfo, so the two agree by construction;
// separate --emit=cuda and --emit=plan runs build the same ProgramInfo from
// the same IR.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_LIB_BACKEND_PROGRAMINFO_H
#define MSCCLC_LIB_BACKEND_PROGRAMINFO_H

#include "mscl/IR/MsclLayout.h"
#include "mscl/IR/MsclOps.h"

#include "llvm/ADT/StringMap.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mscclc {
namespace backend {

struct BufferInfo {
  std::string name;
  mscl::BufferKind kind;
  int64_t chunks = 0;
  bool packet = false;
  int scratchIndex = -1; ///< position in the scratch layout, -1 for user
};

/// A point-to-point channel as seen from its source rank.
struct ChannelInfo {
  mscl::ChannelOp op;
  std::string name;
  bool isPort = false;
  bool isLL = false; ///< memory channel with the LL protocol
  int64_t src = 0, dst = 0, id = 0;
  int index = -1;     ///< in src's memory or port list
  int peerIndex = -1; ///< the reverse channel's index in dst's list
  int64_t block = -1; ///< owning thread block (first of its group)
  int64_t group = 1;
  int64_t peerGroup = 1; ///< group of the block owning the reverse channel
  bool signals = false, waits = false;
  int waitSlot = -1;
  std::set<std::string> peerBuffers; ///< "input", "output", "scratch"
};

struct SwitchInfo {
  mscl::SwitchChannelOp op;
  std::string name;
  std::vector<int64_t> ranks;
  int64_t id = 0;
  std::map<int64_t, int> indexOnRank; ///< position in each rank's list
  /// Buffers reached through the switch ("input", "output", "scratch"):
  /// the runtime binds exactly these to the multicast object.
  std::set<std::string> buffers;
};

struct RankInfo {
  int64_t rank = 0;
  int64_t blocks = 0; ///< grid size
  int waitSlots = 0;
  std::vector<ChannelInfo *> memory, port;
  std::vector<SwitchInfo *> switches;
};

class ProgramInfo {
public:
  /// Collects the information; reports errors at op locations and returns
  /// nullopt when the program cannot be compiled.
  static std::optional<ProgramInfo> build(mscl::ProgramOp program);

  mscl::ProgramOp program;
  std::string name;
  int64_t ranks = 0, chunks = 1;
  /// Chunk sizes at every count (the element-exact semantics).
  mscl::ChunkLayout layout{1};
  std::vector<BufferInfo> buffers; ///< declaration order
  std::vector<const BufferInfo *> scratch;
  std::vector<std::unique_ptr<ChannelInfo>> channels;
  std::vector<std::unique_ptr<SwitchInfo>> switches;
  std::vector<RankInfo> rankInfos; ///< index = rank
  std::vector<mscl::RankOp> rankOps; ///< index = rank; null if absent
  bool usesPort = false, usesSwitch = false;

  const BufferInfo *lookupBuffer(llvm::StringRef name) const;
  ChannelInfo *lookupChannel(llvm::StringRef name) const;
  SwitchInfo *lookupSwitch(llvm::StringRef name) const;

private:
  llvm::StringMap<size_t> bufferIndex;
  llvm::StringMap<ChannelInfo *> channelByName;
  llvm::StringMap<SwitchInfo *> switchByName;
};

/// The .mscl line of a location (0 when it has none); `file` gets the
/// source file's name.
unsigned sourceLine(mlir::Location loc, std::string *file = nullptr);

/// A C identifier derived from `name` (letters, digits, underscores).
std::string sanitize(llvm::StringRef name);

/// The kernel name of rank r.
std::string kernelName(const ProgramInfo &info, int64_t rank);
/// The kernel that scales a rank's input by its PreMulSum scalar.
std::string premulKernelName(const ProgramInfo &info);

} // namespace backend
} // namespace mscclc

#endif // MSCCLC_LIB_BACKEND_PROGRAMINFO_H
