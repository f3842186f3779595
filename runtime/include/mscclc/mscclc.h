/*===- mscclc.h - The mscclc JIT API ---------------------------*- C -*-===//
 *
 * Compile a collective algorithm written in .mscl for a rank count, then run
 * it on a communicator:
 *
 *   mscclcUniqueId id;            // rank 0: mscclcGetUniqueId(&id), then
 *                                 // share the 128 bytes with every rank
 *   mscclcComm_t comm;
 *   mscclcCommInitRank(&comm, nranks, id, rank);   // on the current device
 *   mscclcCompileOptions opts = MSCCLC_COMPILE_OPTIONS_INIT;
 *   opts.ranks = nranks;
 *   mscclcProgram_t prog;
 *   mscclcProgramCompileFile(&prog, "allreduce.mscl", &opts);
 *   mscclcProgramRun(prog, comm, send, recv, count, mscclcFloat32, mscclcSum,
 *                    stream);
 *   mscclcProgramCheck(prog, comm, stream);       // waits, reports kernel errors
 *
 * Every function returns mscclcSuccess or an error code;
 * mscclcGetLastError() then gives a message naming what failed and why (per
 * thread). Compilation runs the `mscclc` compiler binary (MSCCLC_COMPILER,
 * else next to this library, else PATH) and NVRTC; see docs/jit-api.md.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MSCCLC_MSCCLC_H
#define MSCCLC_MSCCLC_H

#include "mscclc/device/Target.h"

#if MSCCLC_TARGET_HIP
#include <hip/hip_runtime_api.h>
#else
#include <cuda_runtime_api.h>
#endif
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The stream of the GPU runtime libmscclc was built for: cudaStream_t,
 * or hipStream_t where it was built for AMD GPUs (MSCCLC_TARGET_HIP). */
#if MSCCLC_TARGET_HIP
typedef hipStream_t mscclcStream_t;
#else
typedef cudaStream_t mscclcStream_t;
#endif

/* The enums callers pass in have int as their type in C++, so a value
 * outside the enumerators is well defined there and refused by the API
 * (ncclInvalidArgument-style), not undefined behaviour. */
#ifdef __cplusplus
#define MSCCLC_ENUM_INT : int
#else
#define MSCCLC_ENUM_INT
#endif

#define MSCCLC_MAJOR 0
#define MSCCLC_MINOR 1
#define MSCCLC_PATCH 0

typedef enum {
  mscclcSuccess = 0,
  mscclcInvalidArgument = 1,
  mscclcCudaError = 2,
  mscclcSystemError = 3,
  mscclcCompileError = 4,
  mscclcDeviceError = 5, /* a kernel recorded an error (wait time-out, ...) */
  mscclcUnsupported = 6,
  mscclcTimeout = 7,     /* a host-side wait (bootstrap, proxy) timed out */
  mscclcInternalError = 8,
} mscclcResult_t;

typedef enum MSCCLC_ENUM_INT {
  mscclcFloat32 = 0,
  mscclcFloat16 = 1,
  mscclcBfloat16 = 2,
  mscclcFloat64 = 3,
  mscclcInt32 = 4,
  mscclcUint32 = 5,
  mscclcInt64 = 6,
  mscclcUint64 = 7,
  mscclcInt8 = 8,
  mscclcUint8 = 9,
  mscclcFloat8e4m3 = 10, /* OCP fp8: 4 exponent bits, 3 mantissa bits */
  mscclcFloat8e5m2 = 11, /* OCP fp8: 5 exponent bits, 2 mantissa bits */
} mscclcDataType_t;

typedef enum MSCCLC_ENUM_INT {
  mscclcSum = 0,
  mscclcProd = 1,
  mscclcMin = 2,
  mscclcMax = 3,
  mscclcAvg = 4,
  /* NCCL's PreMulSum: the sum over ranks of each rank's input times that
   * rank's scalar. Runs through mscclcRunCollectivePreMulSum, which takes
   * the scalar; mscclcCollectiveSupported and mscclcCollectiveAlgorithm
   * accept it. */
  mscclcPreMulSum = 5,
} mscclcRedOp_t;

#define MSCCLC_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[MSCCLC_UNIQUE_ID_BYTES];
} mscclcUniqueId;

typedef struct mscclcComm *mscclcComm_t;
typedef struct mscclcProgram *mscclcProgram_t;

/* Options of mscclcProgramCompile*. Zero values mean "compiler default". */
typedef struct {
  int ranks;            /* required: the communicator size */
  int gpusPerNode;      /* 0: all ranks on one node */
  int instances;        /* 0: the algorithm's default */
  const char *const *defines; /* "name=value" strings, -D to the compiler */
  int numDefines;
  const char *compiler; /* path of the mscclc binary; NULL: search */
} mscclcCompileOptions;

#define MSCCLC_COMPILE_OPTIONS_INIT {0, 0, 0, NULL, 0, NULL}

/* Errors. */
const char *mscclcGetErrorString(mscclcResult_t result);
/* The message of the last failed call on this thread ("" if none). */
const char *mscclcGetLastError(void);
int mscclcGetVersion(void); /* MAJOR*10000 + MINOR*100 + PATCH */

/* Communicators. */
/* Starts a bootstrap root in this process (or names MSCCLC_COMM_ID's). */
mscclcResult_t mscclcGetUniqueId(mscclcUniqueId *id);
/* Builds the id of a root that rank 0 hosts at "host:port" (torchrun's
 * MASTER_ADDR/MASTER_PORT): every rank computes it without communication.
 * Its secret comes from MSCCLC_BOOTSTRAP_SECRET, set alike on every rank. */
mscclcResult_t mscclcUniqueIdFromAddress(mscclcUniqueId *id,
                                         const char *hostPort);
/* One process per GPU: collective over `nranks` ranks, on the current device. */
mscclcResult_t mscclcCommInitRank(mscclcComm_t *comm, int nranks,
                                  mscclcUniqueId id, int rank);
/* The same, placing this rank on node `node` (-1: none, as above): ranks
 * given the same number share a node (they must share a host), and every
 * rank is given one or none. A communicator built from part of another (a
 * split) passes each rank's mscclcCommNode in the other, so that it keeps
 * the other's nodes, virtual ones (MSCCLC_NODE_OF_RANK) included. */
mscclcResult_t mscclcCommInitRankOnNode(mscclcComm_t *comm, int nranks,
                                        mscclcUniqueId id, int rank, int node);
/* One process, several GPUs: comms[i] is rank i on devices[i] (NULL: 0..n-1). */
mscclcResult_t mscclcCommInitAll(mscclcComm_t *comms, int ndev,
                                 const int *devices);
mscclcResult_t mscclcCommDestroy(mscclcComm_t comm);
/* Ends this rank's kernels that wait (now or later) instead of letting them
 * hang, e.g. after a peer died: they stop and record "aborted", which
 * mscclcProgramCheck reports; later runs are refused. Local and safe to call
 * from any thread; every rank whose kernels may wait calls it on its own
 * communicator. Then destroy the communicator. */
mscclcResult_t mscclcCommAbort(mscclcComm_t comm);
/* Whether this rank's kernels recorded an error (a wait that timed out, an
 * abort), without waiting for their streams: for watchdogs polling a
 * communicator whose kernels may hang. *asyncError is mscclcSuccess or
 * mscclcDeviceError; then mscclcGetLastError() names the program, rank,
 * block and operation. */
mscclcResult_t mscclcCommGetAsyncError(mscclcComm_t comm,
                                       mscclcResult_t *asyncError);
mscclcResult_t mscclcCommRank(mscclcComm_t comm, int *rank);
mscclcResult_t mscclcCommCount(mscclcComm_t comm, int *nranks);
mscclcResult_t mscclcCommDevice(mscclcComm_t comm, int *device);
/* This rank's node: 0.. in the order of each node's lowest rank. */
mscclcResult_t mscclcCommNode(mscclcComm_t comm, int *node);

/* Programs. */
mscclcResult_t mscclcProgramCompileFile(mscclcProgram_t *program,
                                        const char *path,
                                        const mscclcCompileOptions *options);
mscclcResult_t mscclcProgramCompileString(mscclcProgram_t *program,
                                          const char *source,
                                          const mscclcCompileOptions *options);
/* Already generated code: `mscclc --emit=cuda` output and its plan. */
mscclcResult_t mscclcProgramCreateFromGenerated(mscclcProgram_t *program,
                                                const char *cudaSource,
                                                const char *planJson);
mscclcResult_t mscclcProgramDestroy(mscclcProgram_t program);
/* Element counts of the send and receive buffers for a collective `count`. */
mscclcResult_t mscclcProgramBufferCounts(mscclcProgram_t program, size_t count,
                                         size_t *sendCount, size_t *recvCount);
/* Whether the program was compiled in place (then send == recv). */
mscclcResult_t mscclcProgramInPlace(mscclcProgram_t program, int *inPlace);
/* The collective the program computes ("allreduce", "allgather",
 * "reducescatter", "broadcast", "reduce", "gather", "scatter", "alltoall",
 * "custom"); the string lives as long as the program. reduce and gather
 * write the root's receive buffer only; scatter's result depends on the
 * root's send buffer only. */
mscclcResult_t mscclcProgramCollective(mscclcProgram_t program,
                                       const char **collective);
/* The root rank of a rooted collective (broadcast, reduce, gather,
 * scatter), as compiled (with its parameters bound); 0 for the others. */
mscclcResult_t mscclcProgramRoot(mscclcProgram_t program, int *root);
/* Whether the program uses SwitchChannels (NVLink multicast): runs are then
 * refused where multicast is unavailable or turned off. */
mscclcResult_t mscclcProgramUsesSwitchChannels(mscclcProgram_t program,
                                               int *uses);

/* Runs the program: enqueues its kernel on `stream`. The first run of a
 * program on a communicator (and a run with a larger count or, for programs
 * that touch the peers' user buffers, new buffers) is collective: every rank
 * must call it. Later runs with the same buffers only launch, so they can be
 * captured in a CUDA graph. */
mscclcResult_t mscclcProgramRun(mscclcProgram_t program, mscclcComm_t comm,
                                const void *sendbuff, void *recvbuff,
                                size_t count, mscclcDataType_t dtype,
                                mscclcRedOp_t op, mscclcStream_t stream);
/* Does the collective setup of mscclcProgramRun without launching. */
mscclcResult_t mscclcProgramPrepare(mscclcProgram_t program, mscclcComm_t comm,
                                    const void *sendbuff, void *recvbuff,
                                    size_t count, mscclcDataType_t dtype,
                                    mscclcRedOp_t op, mscclcStream_t stream);
/* Compiles rank `rank`'s kernel of the program for `dtype` and `op` on the
 * architecture of CUDA device `device` (from the ahead-of-time store, the
 * kernel cache or NVRTC) and keeps it with the program, so that a first
 * run does not wait for it. Needs no communicator and is not collective;
 * threads may call it at once, for different kernels or the same. */
mscclcResult_t mscclcProgramCompileKernel(mscclcProgram_t program, int rank,
                                          mscclcDataType_t dtype,
                                          mscclcRedOp_t op, int device);
/* Waits for `stream` and reports an error the kernels recorded (rank, block,
 * channel, operation, .mscl line) as mscclcDeviceError. */
mscclcResult_t mscclcProgramCheck(mscclcProgram_t program, mscclcComm_t comm,
                                  mscclcDataType_t dtype, mscclcRedOp_t op,
                                  mscclcStream_t stream);
/* Collective: resets the program's semaphores, epochs and scratch on every
 * rank, after a device error. */
mscclcResult_t mscclcProgramReset(mscclcProgram_t program, mscclcComm_t comm,
                                  mscclcDataType_t dtype, mscclcRedOp_t op);

/* Collectives of the standard library (stdlib/), selected and compiled by
 * the runtime: the caller names the collective, not an algorithm. */
typedef enum MSCCLC_ENUM_INT {
  mscclcCollAllReduce = 0,
  mscclcCollAllGather = 1,
  mscclcCollReduceScatter = 2,
  mscclcCollBroadcast = 3,
  mscclcCollReduce = 4,
  mscclcCollAllToAll = 5,
  mscclcCollGather = 6,
  mscclcCollScatter = 7,
} mscclcCollective_t;

/* Counts as NCCL defines them: allreduce, broadcast, reduce: elements of each
 * buffer; allgather, gather: elements each rank sends (recv holds
 * nranks*count); reducescatter, scatter: elements each rank receives (send
 * holds nranks*count); alltoall: elements per peer (both hold nranks*count).
 * In place means sendbuff == recvbuff, with NCCL's offsets (allgather: the
 * rank's input at rank*count of recvbuff; reducescatter: the output at
 * rank*count of sendbuff). `root` matters for rooted collectives only. */

/* *supported = 1 if the stdlib (through the selection table) has an algorithm
 * for this call on this communicator; else 0 and mscclcGetLastError() says
 * why. Local (no communication, no compilation). */
mscclcResult_t mscclcCollectiveSupported(mscclcComm_t comm,
                                         mscclcCollective_t coll, size_t count,
                                         mscclcDataType_t dtype,
                                         mscclcRedOp_t op, int root,
                                         int inPlace, int *supported);
/* Selects the stdlib algorithm, compiles it once (cached per process and in
 * the kernel cache) and runs it on `stream`; collective like
 * mscclcProgramRun (every rank calls it with the same arguments but
 * buffers and stream, in place on all ranks or on none), and queued like
 * it inside a group. A call the
 * library cannot serve returns mscclcUnsupported and runs nothing. */
mscclcResult_t mscclcRunCollective(mscclcComm_t comm, mscclcCollective_t coll,
                                   const void *sendbuff, void *recvbuff,
                                   size_t count, mscclcDataType_t dtype,
                                   mscclcRedOp_t op, int root,
                                   mscclcStream_t stream);
/* mscclcRunCollective on the caller's buffers themselves: no staging copy,
 * under mscclcProgramRun's contract instead. Every rank must change buffers
 * at the same calls: a new pair of buffers is a collective set-up step in
 * which the ranks map each other's (keyed by allocation id, so a freed and
 * reallocated buffer at the same address is mapped anew). For callers that
 * know every rank's buffers move together, e.g. NCCL's symmetric windows.
 * mscclcPreMulSum is not offered (its input is always staged). */
mscclcResult_t mscclcRunCollectiveDirect(mscclcComm_t comm,
                                         mscclcCollective_t coll,
                                         const void *sendbuff, void *recvbuff,
                                         size_t count, mscclcDataType_t dtype,
                                         mscclcRedOp_t op, int root,
                                         mscclcStream_t stream);
/* mscclcRunCollective with mscclcPreMulSum: every rank's input is multiplied
 * by its own `scalar` (one element of `dtype`, in T's arithmetic) before the
 * sum, in a kernel that copies the input into the executor's staging (so
 * the collective runs on the staging, in or out of place). With
 * scalarOnDevice = 1, `scalar` is device memory read when the call runs on
 * the stream (CUDA graphs read it at every replay); with 0 it is host
 * memory read now. Reducing collectives only (all-reduce, reduce,
 * reduce-scatter); one rank is unsupported (no stdlib program serves it). */
mscclcResult_t mscclcRunCollectivePreMulSum(
    mscclcComm_t comm, mscclcCollective_t coll, const void *sendbuff,
    void *recvbuff, size_t count, mscclcDataType_t dtype, const void *scalar,
    int scalarOnDevice, int root, mscclcStream_t stream);
/* The most thread blocks a stdlib collective may launch per rank on this
 * communicator (0: no limit, the default), to leave SMs to the
 * application; the NCCL library passes ncclConfig_t.maxCTAs. The selection
 * then takes fewer instances of its choice, and a call whose algorithm needs
 * more blocks at one instance is unsupported (mscclcUnsupported, nothing
 * run). Collective: every rank calls it; the smallest limit any rank gives
 * holds on all. */
mscclcResult_t mscclcCommSetMaxBlocks(mscclcComm_t comm, int maxBlocks);
/* Which stdlib algorithm the selection picks, as "stem instances=K
 * name=value..." (e.g. "allreduce_2pa_hb instances=8"); for logs. The
 * string lives until the next call of this function on the thread. */
mscclcResult_t mscclcCollectiveAlgorithm(mscclcComm_t comm,
                                         mscclcCollective_t coll, size_t count,
                                         mscclcDataType_t dtype,
                                         mscclcRedOp_t op, int root,
                                         int inPlace, const char **name);

/* Device memory that SwitchChannel programs can bind to NVLink multicast
 * objects (cuMemCreate, at least 2 MiB granules), on the current device and
 * accessible from its peers. Any program takes it when one process drives
 * all GPUs; across processes CUDA IPC cannot map it, so there programs whose
 * channels reach peers' user buffers need cudaMalloc memory. Free it with
 * mscclcMemFree after the programs using it are done. */
mscclcResult_t mscclcMemAlloc(void **ptr, size_t bytes);
mscclcResult_t mscclcMemFree(void *ptr);

/* Groups (one thread driving several communicators): runs between
 * GroupStart and GroupEnd are queued; GroupEnd does their collective setup
 * concurrently, then launches them in order. */
mscclcResult_t mscclcGroupStart(void);
mscclcResult_t mscclcGroupEnd(void);

#ifdef __cplusplus
}
#endif

#endif /* MSCCLC_MSCCLC_H */
