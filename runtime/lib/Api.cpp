//===- Api.cpp - The C API of mscclc.h over the runtime classes -----------===//
//
// Turns Status values into result codes plus a thread-local message, checks
// every argument before it reaches the runtime, and implements groups.
//
//===----------------------------------------------------------------------===//

#include "mscclc/mscclc.h"

#include "mscclc/floor/Tables.h"
#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/BootstrapWire.h"
#include "mscclc/runtime/CaptureMode.h"
#include "mscclc/runtime/Communicator.h"
#include "mscclc/runtime/Executor.h"
#include "mscclc/runtime/Limits.h"
#include "mscclc/runtime/Multicast.h"
#include "mscclc/runtime/Program.h"
#include "mscclc/runtime/StdlibPrograms.h"

#include <cstring>
#include <map>
#include <thread>

using namespace mscclc::rt;

struct mscclcComm {
  std::unique_ptr<Communicator> comm;
  StdlibState stdlib; ///< selection agreed at set-up (mscclcRunCollective)
};
struct mscclcProgram {
  std::unique_ptr<Program> program;
};

namespace {

thread_local std::string lastError;

mscclcResult_t fail(const Status &s) {
  lastError = s.message();
  MSCCLC_LOG(Debug, "API error: {}", s.message());
  switch (s.code()) {
  case Code::Ok: return mscclcSuccess;
  case Code::InvalidArgument: return mscclcInvalidArgument;
  case Code::CudaError: return mscclcCudaError;
  case Code::SystemError: return mscclcSystemError;
  case Code::CompileError: return mscclcCompileError;
  case Code::DeviceError: return mscclcDeviceError;
  case Code::Unsupported: return mscclcUnsupported;
  case Code::Timeout: return mscclcTimeout;
  case Code::Internal: return mscclcInternalError;
  }
  return mscclcInternalError;
}

mscclcResult_t result(const Status &s) {
  if (s.isOk()) {
    lastError.clear();
    return mscclcSuccess;
  }
  return fail(s);
}

#define API_CHECK(cond, msg)                                                   \
  do {                                                                         \
    if (!(cond))                                                               \
      return fail(invalidArgument(msg));                                       \
  } while (0)

// mscclc.h's enums are ABI, written out there for C; they must agree with
// the floor's tables (mscclc/floor/*.def) value for value, which is what
// makes the casts between them below sound.
#define MSCCLC_COLLECTIVE(Id, name, Nccl, rooted, reduces, in, out, inPlace,   \
                          value)                                               \
  static_assert(mscclcColl##Id == value, "mscclcColl" #Id);
#define MSCCLC_PROGRAM_COLLECTIVE(...)
#include "mscclc/floor/Collectives.def"
#define MSCCLC_DATA_TYPE(Id, name, ncclName, bytes, nccl, value, multimem)     \
  static_assert(mscclc##Id == value, "mscclc" #Id);
#include "mscclc/floor/DataTypes.def"
#define MSCCLC_RED_OP(Id, name, nccl, value, multimem)                         \
  static_assert(mscclc##Id == value, "mscclc" #Id);
#include "mscclc/floor/RedOps.def"

/// The floor's name of an mscclcDataType_t, null outside the enum.
const char *dtypeName(mscclcDataType_t t) {
  std::optional<mscclc::DataType> d = mscclc::dataTypeOfMscclc(int(t));
  return d ? mscclc::dataTypeName(*d) : nullptr;
}

/// The floor's name of an mscclcRedOp_t, null outside the enum.
const char *redopName(mscclcRedOp_t op) {
  std::optional<mscclc::RedOp> r = mscclc::redOpOfMscclc(int(op));
  return r ? mscclc::redOpName(*r) : nullptr;
}

/// The runtime's names of a data type and an operator, or an error for a
/// value outside the enums.
Status kernelNames(mscclcDataType_t dtype, mscclcRedOp_t op, const char **d,
                   const char **r) {
  *d = dtypeName(dtype);
  *r = redopName(op);
  if (!*d)
    return invalidArgument(fmt::format("unknown data type {}", int(dtype)));
  if (!*r)
    return invalidArgument(
        fmt::format("unknown reduction operator {}", int(op)));
  return Status::ok();
}

/// The executor of (program, dtype, op) on `comm`, created (collectively)
/// on first use; `staged`: the stdlib's runs (Executor.h).
Status executorFor(Program *program, mscclcComm_t comm,
                   mscclcDataType_t dtype, mscclcRedOp_t op, bool create,
                   Executor **out, bool staged = false) {
  const char *d = nullptr, *r = nullptr;
  MSCCLC_TRY(kernelNames(dtype, op, &d, &r));
  Communicator &c = *comm->comm;
  std::string key = fmt::format(
      "{}/{}/{}{}", static_cast<unsigned long long>(program->id()), d, r,
      staged ? "/staged" : "");
  std::lock_guard<std::mutex> lock(c.executorMutex());
  auto it = c.executors().find(key);
  if (it != c.executors().end()) {
    *out = it->second.get();
    return Status::ok();
  }
  if (!create)
    return invalidArgument("the program has not run on this communicator "
                           "with this data type and operator");
  auto ex = std::make_unique<Executor>(c, *program, d, r, staged);
  MSCCLC_TRY(ex->init());
  *out = ex.get();
  c.executors().emplace(key, std::move(ex));
  return Status::ok();
}

struct RunArgs {
  Program *program;
  mscclcComm_t comm;
  const void *send;
  void *recv;
  size_t count;
  mscclcDataType_t dtype;
  mscclcRedOp_t op;
  cudaStream_t stream;
  /// A one-rank stdlib collective: a plain copy of copyBytes, no program.
  bool copyOnly = false;
  size_t copyBytes = 0;
  /// On the executor's staging buffers (the kernel never sees send and
  /// recv together, so they may alias in NCCL's in-place layouts).
  bool staged = false;
  /// op == mscclcPreMulSum: the scalar (its host value copied at the call).
  PreMulScalar scalar;
};

Program *unwrap(mscclcProgram_t p) { return p ? p->program.get() : nullptr; }

Status checkRunArgs(const RunArgs &a) {
  if (!a.program || !a.comm)
    return invalidArgument("program and communicator must not be NULL");
  const Plan &plan = a.program->plan();
  if (a.count > 0 && (!a.send || !a.recv))
    return invalidArgument("send and receive buffers must not be NULL");
  if (plan.inPlace && a.send != a.recv)
    return invalidArgument(fmt::format(
        "program {} was compiled in place: pass the same send and receive "
        "buffer",
        plan.name));
  if (!plan.inPlace && !a.staged && a.send == a.recv && a.count > 0)
    return invalidArgument(fmt::format(
        "program {} was compiled out of place: send and receive buffers must "
        "differ (compile an in-place variant for in-place use)",
        plan.name));
  return Status::ok();
}

Status prepareRun(const RunArgs &a, Executor **ex) {
  MSCCLC_TRY(executorFor(a.program, a.comm, a.dtype, a.op, true, ex, a.staged));
  return (*ex)->prepare(a.send, a.recv, a.count, a.stream);
}

Status doRun(const RunArgs &a) {
  if (a.copyOnly) {
    if (a.copyBytes == 0 || a.send == a.recv)
      return Status::ok();
    cudaError_t err = cudaMemcpyAsync(a.recv, a.send, a.copyBytes,
                                      cudaMemcpyDeviceToDevice, a.stream);
    return err == cudaSuccess
               ? Status::ok()
               : toStatus(err, "cudaMemcpyAsync (one-rank collective)",
                          __FILE__, __LINE__);
  }
  MSCCLC_TRY(checkRunArgs(a));
  if (a.count == 0)
    return Status::ok();
  Executor *ex = nullptr;
  MSCCLC_TRY(prepareRun(a, &ex));
  return ex->launch(a.send, a.recv, a.count, a.stream,
                    a.op == mscclcPreMulSum ? &a.scalar : nullptr);
}

thread_local int groupDepth = 0;
thread_local std::vector<RunArgs> groupOps;

} // namespace

extern "C" {

const char *mscclcGetErrorString(mscclcResult_t r) {
  switch (r) {
  case mscclcSuccess: return "success";
  case mscclcInvalidArgument: return "invalid argument";
  case mscclcCudaError: return "CUDA error";
  case mscclcSystemError: return "system error";
  case mscclcCompileError: return "compile error";
  case mscclcDeviceError: return "device error";
  case mscclcUnsupported: return "unsupported";
  case mscclcTimeout: return "timeout";
  case mscclcInternalError: return "internal error";
  }
  return "unknown result";
}

const char *mscclcGetLastError(void) { return lastError.c_str(); }

int mscclcGetVersion(void) {
  return MSCCLC_MAJOR * 10000 + MSCCLC_MINOR * 100 + MSCCLC_PATCH;
}

mscclcResult_t mscclcGetUniqueId(mscclcUniqueId *id) {
  API_CHECK(id, "id must not be NULL");
  static_assert(sizeof(mscclcUniqueId) == sizeof(UniqueId), "id size");
  UniqueId u;
  Status s = createUniqueId(&u);
  if (s.isOk())
    memcpy(id->internal, u.bytes, sizeof(u.bytes));
  return result(s);
}

mscclcResult_t mscclcUniqueIdFromAddress(mscclcUniqueId *id,
                                         const char *hostPort) {
  API_CHECK(id && hostPort, "id and address must not be NULL");
  UniqueId u;
  Status s = uniqueIdFromAddress(hostPort, &u);
  if (s.isOk())
    memcpy(id->internal, u.bytes, sizeof(u.bytes));
  return result(s);
}

mscclcResult_t mscclcCommInitRankOnNode(mscclcComm_t *comm, int nranks,
                                        mscclcUniqueId id, int rank, int node) {
  API_CHECK(comm, "comm must not be NULL");
  *comm = nullptr;
  // Above the limit the bootstrap's tables alone would take gigabytes.
  API_CHECK(nranks >= 1 && nranks <= mscclc::limits::kMaxRanks,
            fmt::format("nranks is {}, expected 1 to {}", nranks,
                        mscclc::limits::kMaxRanks));
  API_CHECK(rank >= 0 && rank < nranks, "rank must be in [0, nranks)");
  API_CHECK(node >= -1, "node must be a node number, or -1 for none");
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return fail(
        Status(Code::CudaError, "no " MSCCLC_GPU_API " device is available"));
  }
  UniqueId u;
  memcpy(u.bytes, id.internal, sizeof(u.bytes));
  auto handle = std::make_unique<mscclcComm>();
  Status s = Communicator::create(u, rank, nranks, device, &handle->comm, node);
  if (s.isOk())
    s = stdlibSetUp(*handle->comm, &handle->stdlib);
  if (!s.isOk())
    return fail(s);
  *comm = handle.release();
  return result(Status::ok());
}

mscclcResult_t mscclcCommInitRank(mscclcComm_t *comm, int nranks,
                                  mscclcUniqueId id, int rank) {
  return mscclcCommInitRankOnNode(comm, nranks, id, rank, -1);
}

mscclcResult_t mscclcCommInitAll(mscclcComm_t *comms, int ndev,
                                 const int *devices) {
  API_CHECK(comms, "comms must not be NULL");
  API_CHECK(ndev >= 1, "ndev must be at least 1");
  std::vector<int> devs;
  for (int i = 0; i < ndev; ++i)
    devs.push_back(devices ? devices[i] : i);
  std::vector<std::unique_ptr<Communicator>> out;
  Status s = Communicator::createAll(devs, &out);
  if (!s.isOk())
    return fail(s);
  std::vector<std::unique_ptr<mscclcComm>> handles(static_cast<size_t>(ndev));
  for (int i = 0; i < ndev; ++i) {
    handles[size_t(i)] = std::make_unique<mscclcComm>();
    handles[size_t(i)]->comm = std::move(out[size_t(i)]);
  }
  // The stdlib agreement is collective: one thread per rank.
  std::vector<Status> statuses(static_cast<size_t>(ndev));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < handles.size(); ++i)
    threads.emplace_back([&, i] {
      statuses[i] = stdlibSetUp(*handles[i]->comm, &handles[i]->stdlib);
    });
  for (auto &t : threads)
    t.join();
  for (const Status &st : statuses)
    if (!st.isOk())
      return fail(st);
  for (int i = 0; i < ndev; ++i)
    comms[i] = handles[size_t(i)].release();
  return result(Status::ok());
}

mscclcResult_t mscclcCommDestroy(mscclcComm_t comm) {
  delete comm;
  return result(Status::ok());
}

mscclcResult_t mscclcCommAbort(mscclcComm_t comm) {
  API_CHECK(comm, "comm must not be NULL");
  comm->comm->abort();
  return result(Status::ok());
}

mscclcResult_t mscclcCommGetAsyncError(mscclcComm_t comm,
                                       mscclcResult_t *asyncError) {
  API_CHECK(comm && asyncError, "arguments must not be NULL");
  *asyncError = mscclcSuccess;
  Communicator &c = *comm->comm;
  std::lock_guard<std::mutex> lock(c.executorMutex());
  for (auto &entry : c.executors()) {
    std::string message;
    Status s = entry.second->peekError(&message);
    if (!s.isOk())
      return fail(s);
    if (!message.empty()) {
      *asyncError = mscclcDeviceError;
      lastError = message;
      return mscclcSuccess;
    }
  }
  return result(Status::ok());
}

mscclcResult_t mscclcCommRank(mscclcComm_t comm, int *rank) {
  API_CHECK(comm && rank, "arguments must not be NULL");
  *rank = comm->comm->rank();
  return mscclcSuccess;
}
mscclcResult_t mscclcCommCount(mscclcComm_t comm, int *nranks) {
  API_CHECK(comm && nranks, "arguments must not be NULL");
  *nranks = comm->comm->nranks();
  return mscclcSuccess;
}
mscclcResult_t mscclcCommDevice(mscclcComm_t comm, int *device) {
  API_CHECK(comm && device, "arguments must not be NULL");
  *device = comm->comm->device();
  return mscclcSuccess;
}
mscclcResult_t mscclcCommNode(mscclcComm_t comm, int *node) {
  API_CHECK(comm && node, "arguments must not be NULL");
  *node = comm->comm->node(comm->comm->rank());
  return mscclcSuccess;
}
mscclcResult_t mscclcCommSetMaxBlocks(mscclcComm_t comm, int maxBlocks) {
  API_CHECK(comm, "comm must not be NULL");
  API_CHECK(maxBlocks >= 0,
            fmt::format("maxBlocks must be 0 (no limit) or more, not {}", maxBlocks));
  // Every rank must select alike: the smallest limit wins everywhere.
  Communicator &c = *comm->comm;
  std::vector<int32_t> all(size_t(c.nranks()), 0);
  all[size_t(c.rank())] = maxBlocks;
  Status s = c.bootstrap().allGather(all.data(), sizeof(int32_t));
  if (!s.isOk())
    return fail(s.context("agreeing on the block limit"));
  int limit = 0;
  for (int32_t v : all)
    if (v > 0 && (limit == 0 || v < limit))
      limit = v;
  comm->stdlib.maxBlocks.store(limit);
  return mscclcSuccess;
}

static Status toCompilerOptions(const mscclcCompileOptions *o,
                                CompilerOptions *out) {
  if (!o)
    return invalidArgument("compile options must not be NULL (ranks is required)");
  if (o->ranks < 1)
    return invalidArgument("compile options: ranks must be at least 1");
  out->ranks = o->ranks;
  out->gpusPerNode = o->gpusPerNode;
  out->instances = o->instances;
  if (o->compiler)
    out->compiler = o->compiler;
  for (int i = 0; i < o->numDefines; ++i) {
    const char *d = o->defines ? o->defines[i] : nullptr;
    const char *eq = d ? strchr(d, '=') : nullptr;
    if (!eq || eq == d)
      return invalidArgument(
          fmt::format("define '{}' is not name=value", d ? d : "(null)"));
    char *end = nullptr;
    long long v = strtoll(eq + 1, &end, 0);
    if (*end || end == eq + 1)
      return invalidArgument(
          fmt::format("define '{}' needs an integer value", d));
    out->defines.emplace_back(std::string(d, size_t(eq - d)), v);
  }
  return Status::ok();
}

mscclcResult_t mscclcProgramCompileFile(mscclcProgram_t *program,
                                        const char *path,
                                        const mscclcCompileOptions *options) {
  API_CHECK(program && path, "program and path must not be NULL");
  *program = nullptr;
  CompilerOptions opts;
  Status s = toCompilerOptions(options, &opts);
  if (!s.isOk())
    return fail(s);
  auto handle = std::make_unique<mscclcProgram>();
  s = Program::compileFile(path, opts, &handle->program);
  if (!s.isOk())
    return fail(s);
  *program = handle.release();
  return result(Status::ok());
}

mscclcResult_t mscclcProgramCompileString(mscclcProgram_t *program,
                                          const char *source,
                                          const mscclcCompileOptions *options) {
  API_CHECK(program && source, "program and source must not be NULL");
  *program = nullptr;
  CompilerOptions opts;
  Status s = toCompilerOptions(options, &opts);
  if (!s.isOk())
    return fail(s);
  auto handle = std::make_unique<mscclcProgram>();
  s = Program::compileString(source, opts, &handle->program);
  if (!s.isOk())
    return fail(s);
  *program = handle.release();
  return result(Status::ok());
}

mscclcResult_t mscclcProgramCreateFromGenerated(mscclcProgram_t *program,
                                                const char *cudaSource,
                                                const char *planJson) {
  API_CHECK(program && cudaSource && planJson, "arguments must not be NULL");
  *program = nullptr;
  auto handle = std::make_unique<mscclcProgram>();
  Status s = Program::fromGenerated(cudaSource, planJson, &handle->program);
  if (!s.isOk())
    return fail(s);
  *program = handle.release();
  return result(Status::ok());
}

mscclcResult_t mscclcProgramDestroy(mscclcProgram_t program) {
  delete program;
  return result(Status::ok());
}

mscclcResult_t mscclcProgramBufferCounts(mscclcProgram_t program, size_t count,
                                         size_t *sendCount, size_t *recvCount) {
  API_CHECK(program, "program must not be NULL");
  const Plan &p = program->program->plan();
  if (sendCount)
    *sendCount = size_t(p.inputElems(count));
  if (recvCount)
    *recvCount = size_t(p.outputElems(count));
  return mscclcSuccess;
}

mscclcResult_t mscclcProgramInPlace(mscclcProgram_t program, int *inPlace) {
  API_CHECK(program && inPlace, "arguments must not be NULL");
  *inPlace = program->program->plan().inPlace ? 1 : 0;
  return mscclcSuccess;
}

mscclcResult_t mscclcProgramCollective(mscclcProgram_t program,
                                       const char **collective) {
  API_CHECK(program && collective, "arguments must not be NULL");
  *collective = collectiveName(program->program->plan().collective);
  return mscclcSuccess;
}

mscclcResult_t mscclcProgramRoot(mscclcProgram_t program, int *root) {
  API_CHECK(program && root, "arguments must not be NULL");
  *root = program->program->plan().root;
  return mscclcSuccess;
}

mscclcResult_t mscclcProgramUsesSwitchChannels(mscclcProgram_t program,
                                               int *uses) {
  API_CHECK(program && uses, "arguments must not be NULL");
  *uses = program->program->plan().usesSwitchChannels ? 1 : 0;
  return mscclcSuccess;
}

mscclcResult_t mscclcProgramRun(mscclcProgram_t program, mscclcComm_t comm,
                                const void *sendbuff, void *recvbuff,
                                size_t count, mscclcDataType_t dtype,
                                mscclcRedOp_t op, cudaStream_t stream) {
  RunArgs a{unwrap(program), comm, sendbuff, recvbuff, count, dtype, op, stream};
  if (groupDepth > 0) {
    Status s = checkRunArgs(a);
    if (!s.isOk())
      return fail(s);
    groupOps.push_back(a);
    return result(Status::ok());
  }
  return result(doRun(a));
}

mscclcResult_t mscclcProgramPrepare(mscclcProgram_t program, mscclcComm_t comm,
                                    const void *sendbuff, void *recvbuff,
                                    size_t count, mscclcDataType_t dtype,
                                    mscclcRedOp_t op, cudaStream_t stream) {
  RunArgs a{unwrap(program), comm, sendbuff, recvbuff, count, dtype, op, stream};
  Status s = checkRunArgs(a);
  if (!s.isOk())
    return fail(s);
  Executor *ex = nullptr;
  return result(prepareRun(a, &ex));
}

mscclcResult_t mscclcProgramCompileKernel(mscclcProgram_t program, int rank,
                                          mscclcDataType_t dtype,
                                          mscclcRedOp_t op, int device) {
  API_CHECK(program, "program must not be NULL");
  Program *p = unwrap(program);
  const char *d = nullptr, *r = nullptr;
  Status s = kernelNames(dtype, op, &d, &r);
  if (!s.isOk())
    return fail(s);
  const Plan &plan = p->plan();
  if (rank < 0 || rank >= plan.ranks)
    return fail(invalidArgument(
        fmt::format("rank {} is not a rank of program {} ({} ranks)", rank,
                    plan.name, plan.ranks)));
  s = plan.serves(d, r);
  int arch = 0;
  if (s.isOk())
    s = deviceArch(device, &arch);
  if (!s.isOk())
    return fail(s);
  std::string cubin;
  return result(p->cubin(arch, d, Program::kernelRedop(r), rank, &cubin));
}

mscclcResult_t mscclcProgramCheck(mscclcProgram_t program, mscclcComm_t comm,
                                  mscclcDataType_t dtype, mscclcRedOp_t op,
                                  cudaStream_t stream) {
  API_CHECK(program && comm, "program and communicator must not be NULL");
  Executor *ex = nullptr;
  Status s = executorFor(unwrap(program), comm, dtype, op, false, &ex);
  if (!s.isOk()) {
    // Never ran: only the stream can have failed.
    cudaError_t err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess)
      return fail(toStatus(err, "cudaStreamSynchronize(stream)", __FILE__, __LINE__));
    return result(Status::ok());
  }
  return result(ex->check(stream, nullptr));
}

mscclcResult_t mscclcProgramReset(mscclcProgram_t program, mscclcComm_t comm,
                                  mscclcDataType_t dtype, mscclcRedOp_t op) {
  API_CHECK(program && comm, "program and communicator must not be NULL");
  Executor *ex = nullptr;
  Status s = executorFor(unwrap(program), comm, dtype, op, false, &ex);
  if (!s.isOk())
    return result(Status::ok()); // nothing to reset
  return result(ex->reset());
}

/* The stdlib: selection (runtime/lib/Selection.cpp) and its programs
 * (StdlibPrograms.cpp); here only argument checks and the NCCL mapping. */
static Status stdlibQuery(mscclcComm_t comm, mscclcCollective_t coll,
                          size_t count, mscclcDataType_t dtype,
                          mscclcRedOp_t op, int root, bool inPlace,
                          SelectionQuery *q) {
  if (!comm)
    return invalidArgument("comm must not be NULL");
  if (int(coll) < 0 || int(coll) >= mscclc::kNumStandardCollectives)
    return invalidArgument(fmt::format("unknown collective {}", int(coll)));
  const char *d = dtypeName(dtype);
  const char *r = redopName(op);
  if (!d)
    return invalidArgument(fmt::format("unknown data type {}", int(dtype)));
  Collective c = Collective(int(coll));
  if (collectiveReduces(c) && !r)
    return invalidArgument(fmt::format("unknown reduction operator {}", int(op)));
  const StdlibState &st = comm->stdlib;
  MSCCLC_TRY(st.agreed);
  q->collective = c;
  q->nranks = comm->comm->nranks();
  q->nnodes = st.nnodes;
  q->arch = st.arch;
  q->count = count;
  q->dtype = d;
  // Operators do not change what moves in the other collectives: one
  // kernel variant serves them all.
  q->op = collectiveReduces(c) ? r : "sum";
  q->root = collectiveRooted(c) ? root : 0;
  q->inPlace = inPlace;
  return Status::ok();
}

static Status stdlibSelect(mscclcComm_t comm, mscclcCollective_t coll,
                           size_t count, mscclcDataType_t dtype,
                           mscclcRedOp_t op, int root, bool inPlace,
                           SelectionQuery *q, Selection *sel) {
  MSCCLC_TRY(stdlibQuery(comm, coll, count, dtype, op, root, inPlace, q));
  return comm->stdlib.table->select(*q, sel);
}

mscclcResult_t mscclcCollectiveSupported(mscclcComm_t comm,
                                         mscclcCollective_t coll, size_t count,
                                         mscclcDataType_t dtype,
                                         mscclcRedOp_t op, int root,
                                         int inPlace, int *supported) {
  API_CHECK(supported, "supported must not be NULL");
  *supported = 0;
  SelectionQuery q;
  Selection sel;
  Status s = stdlibSelect(comm, coll, count, dtype, op, root, inPlace != 0, &q,
                          &sel);
  if (s.code() == Code::Unsupported) {
    fail(s); // the reason, for mscclcGetLastError()
    return mscclcSuccess;
  }
  if (!s.isOk())
    return fail(s);
  *supported = 1;
  return result(Status::ok());
}

mscclcResult_t mscclcCollectiveAlgorithm(mscclcComm_t comm,
                                         mscclcCollective_t coll, size_t count,
                                         mscclcDataType_t dtype,
                                         mscclcRedOp_t op, int root,
                                         int inPlace, const char **name) {
  API_CHECK(name, "name must not be NULL");
  *name = nullptr;
  SelectionQuery q;
  Selection sel;
  Status s = stdlibSelect(comm, coll, count, dtype, op, root, inPlace != 0, &q,
                          &sel);
  if (s.isOk() && comm->stdlib.maxBlocks.load() > 0 && !sel.builtinCopy() &&
      count > 0) {
    // The block limit may take instances away: that needs the programs.
    const StdlibChoice *choice = nullptr;
    s = stdlibResolve(comm->stdlib, q, &choice);
    if (s.isOk())
      sel = choice->selection;
  }
  if (!s.isOk())
    return fail(s);
  thread_local std::string described;
  described = sel.describe();
  *name = described.c_str();
  return result(Status::ok());
}

/// mscclcRunCollective, mscclcRunCollectiveDirect (`direct`) and
/// mscclcRunCollectivePreMulSum (`scalar` set for
/// mscclcPreMulSum only).
static mscclcResult_t runCollective(mscclcComm_t comm, mscclcCollective_t coll,
                                    const void *sendbuff, void *recvbuff,
                                    size_t count, mscclcDataType_t dtype,
                                    mscclcRedOp_t op, int root,
                                    cudaStream_t stream,
                                    const PreMulScalar *scalar,
                                    bool direct = false) {
  API_CHECK(comm, "comm must not be NULL");
  API_CHECK(int(coll) >= 0 && int(coll) < mscclc::kNumStandardCollectives,
            fmt::format("unknown collective {}", int(coll)));
  const char *d = dtypeName(dtype);
  API_CHECK(d, fmt::format("unknown data type {}", int(dtype)));
  API_CHECK(count == 0 || (sendbuff && recvbuff),
            "send and receive buffers must not be NULL");
  // NCCL's in-place layouts: the program takes the one whole buffer.
  Collective c = Collective(int(coll));
  int n = comm->comm->nranks(), rank = comm->comm->rank();
  size_t es = dtypeSize(d);
  const char *sb = static_cast<const char *>(sendbuff);
  char *rb = static_cast<char *>(recvbuff);
  bool inPlace = false;
  const void *progSend = sendbuff;
  void *progRecv = recvbuff;
  if (c == Collective::AllGather || c == Collective::Gather) {
    inPlace = sb == rb + size_t(rank) * count * es;
    progSend = rb;
  } else if (c == Collective::ReduceScatter || c == Collective::Scatter) {
    inPlace = rb == sb + size_t(rank) * count * es;
    progRecv = const_cast<char *>(sb);
  } else {
    inPlace = sb == rb;
  }
  if (!inPlace) {
    progSend = sendbuff;
    progRecv = recvbuff;
    uint64_t sBytes = inputElements(c, count, n) * es,
             rBytes = outputElements(c, count, n) * es;
    if (count && sb < rb + rBytes && rb < sb + sBytes)
      return fail(invalidArgument(fmt::format(
          "{}: send and receive buffers overlap without being NCCL's in-place "
          "layout",
          collectiveName(c))));
  }
  SelectionQuery q;
  const StdlibChoice *choice = nullptr;
  Status s = stdlibQuery(comm, coll, count, dtype, op, root, inPlace, &q);
  if (s.isOk())
    s = stdlibResolve(comm->stdlib, q, &choice);
  if (!s.isOk())
    return fail(s);
  RunArgs a{choice->program, comm, progSend, progRecv, count, dtype,
            collectiveReduces(c) ? op : mscclcSum, stream};
  if (scalar)
    a.scalar = *scalar;
  if (choice->staged && direct) {
    // The caller's buffers, in the call's own layout: the peers map them.
    a.program = choice->directProgram;
  } else if (choice->staged) {
    // The out-of-place variant, on NCCL's own pointers: the kernel writes
    // the staging, and the copy after it lands where recvbuff says.
    a.staged = true;
    a.send = sendbuff;
    a.recv = recvbuff;
  }
  if (choice->selection.builtinCopy()) {
    a.copyOnly = true;
    a.copyBytes = outputElements(c, count, n) * es;
  } else if (count == 0) {
    return result(Status::ok());
  } else {
    MSCCLC_LOG(Debug, "rank {}: {} of {} {}: {} ({})", rank, collectiveName(c),
               count, d, choice->selection.describe(),
               choice->selection.location);
  }
  if (groupDepth > 0) {
    if (!a.copyOnly) {
      s = checkRunArgs(a);
      if (!s.isOk())
        return fail(s);
    }
    groupOps.push_back(a);
    return result(Status::ok());
  }
  return result(doRun(a));
}

mscclcResult_t mscclcRunCollective(mscclcComm_t comm, mscclcCollective_t coll,
                                   const void *sendbuff, void *recvbuff,
                                   size_t count, mscclcDataType_t dtype,
                                   mscclcRedOp_t op, int root,
                                   cudaStream_t stream) {
  API_CHECK(op != mscclcPreMulSum,
            "mscclcPreMulSum needs its scalar: call "
            "mscclcRunCollectivePreMulSum");
  return runCollective(comm, coll, sendbuff, recvbuff, count, dtype, op, root,
                       stream, nullptr);
}

mscclcResult_t mscclcRunCollectiveDirect(mscclcComm_t comm,
                                         mscclcCollective_t coll,
                                         const void *sendbuff, void *recvbuff,
                                         size_t count, mscclcDataType_t dtype,
                                         mscclcRedOp_t op, int root,
                                         cudaStream_t stream) {
  API_CHECK(op != mscclcPreMulSum,
            "mscclcPreMulSum always stages its input: call "
            "mscclcRunCollectivePreMulSum");
  return runCollective(comm, coll, sendbuff, recvbuff, count, dtype, op, root,
                       stream, nullptr, /*direct=*/true);
}

mscclcResult_t mscclcRunCollectivePreMulSum(
    mscclcComm_t comm, mscclcCollective_t coll, const void *sendbuff,
    void *recvbuff, size_t count, mscclcDataType_t dtype, const void *scalar,
    int scalarOnDevice, int root, cudaStream_t stream) {
  API_CHECK(int(coll) >= 0 && int(coll) < mscclc::kNumStandardCollectives,
            fmt::format("unknown collective {}", int(coll)));
  API_CHECK(collectiveReduces(Collective(int(coll))),
            fmt::format("PreMulSum: {} does not reduce",
                        collectiveName(Collective(int(coll)))));
  API_CHECK(scalar, "scalar must not be NULL");
  const char *d = dtypeName(dtype);
  API_CHECK(d, fmt::format("unknown data type {}", int(dtype)));
  PreMulScalar s;
  if (scalarOnDevice)
    s.device = scalar;
  else
    memcpy(&s.hostBits, scalar, dtypeSize(d)); // little-endian: low bytes
  return runCollective(comm, coll, sendbuff, recvbuff, count, dtype,
                       mscclcPreMulSum, root, stream, &s);
}

mscclcResult_t mscclcMemAlloc(void **ptr, size_t bytes) {
  API_CHECK(ptr, "ptr must not be NULL");
  *ptr = nullptr;
  API_CHECK(bytes > 0, "mscclcMemAlloc of 0 bytes");
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess)
    return result(toStatus(err, "cudaGetDevice", __FILE__, __LINE__));
  return result(allocateCuMem(device, bytes, ptr));
}

mscclcResult_t mscclcMemFree(void *ptr) { return result(freeCuMem(ptr)); }

mscclcResult_t mscclcGroupStart(void) {
  ++groupDepth;
  return mscclcSuccess;
}

mscclcResult_t mscclcGroupEnd(void) {
  if (groupDepth == 0)
    return fail(invalidArgument("mscclcGroupEnd without mscclcGroupStart"));
  if (--groupDepth > 0)
    return mscclcSuccess;
  std::vector<RunArgs> ops;
  ops.swap(groupOps);
  // Ranks that share a GPU run at once or not at all: on one stream their
  // kernels would run one after the other, each waiting for the next.
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t j = i + 1; j < ops.size(); ++j) {
      Communicator &a = *ops[i].comm->comm, &b = *ops[j].comm->comm;
      if (&a != &b && ops[i].count && ops[j].count &&
          ops[i].stream == ops[j].stream && a.sameWorld(b) &&
          a.sameGpu(b.rank()))
        return fail(invalidArgument(fmt::format(
            "ranks {} and {} share GPU {} and were given the same stream: "
            "ranks on one GPU need a stream each (non-blocking), or their "
            "kernels run one after the other and wait for each other forever",
            a.rank(), b.rank(), a.device())));
    }
  // Setup that talks to peers must run on all communicators at once: one
  // thread per queued run when any of them needs it.
  bool collective = false;
  for (const RunArgs &a : ops) {
    if (a.count == 0 || a.copyOnly)
      continue;
    Executor *ex = nullptr;
    if (!executorFor(a.program, a.comm, a.dtype, a.op, false, &ex, a.staged).isOk() ||
        ex->needsCollectiveSetup(a.send, a.recv, a.count)) {
      collective = true;
      break;
    }
  }
  std::vector<Status> statuses(ops.size());
  if (collective && ops.size() > 1) {
    // One thread per communicator, preparing its runs in the order they
    // were queued: every rank queues the same calls in the same order, so
    // the set-ups of one communicator meet their peers' one by one (two set-
    // ups of one communicator at once would mix their bootstrap messages).
    std::map<mscclcComm_t, std::vector<size_t>> byComm;
    for (size_t i = 0; i < ops.size(); ++i)
      if (ops[i].count != 0 && !ops[i].copyOnly)
        byComm[ops[i].comm].push_back(i);
    std::vector<std::thread> threads;
    for (auto &entry : byComm)
      threads.emplace_back([&ops, &statuses, &entry] {
        RelaxedCapture relaxed; // the caller may be capturing a graph
        for (size_t i : entry.second) {
          Executor *ex = nullptr;
          statuses[i] = prepareRun(ops[i], &ex);
          if (!statuses[i].isOk())
            return;
        }
      });
    for (auto &t : threads)
      t.join();
    for (const Status &s : statuses)
      if (!s.isOk())
        return fail(s);
  }
  for (const RunArgs &a : ops) {
    Status s = doRun(a);
    if (!s.isOk())
      return fail(s);
  }
  return result(Status::ok());
}

} // extern "C"
