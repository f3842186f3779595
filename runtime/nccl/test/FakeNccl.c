/*===- FakeNccl.c - A library shaped like NCCL, for the loader's tests ---===//
 *
 * Exports the functions the fallback binds, so the CPU tests can load it
 * as MSCCLC_NCCL_LIBRARY: ncclGetVersion reports 2.29.7, the others only
 * exist (the loader never calls them). Built without ncclSend when
 * FAKE_NCCL_WITHOUT_SEND is defined, to test the loader's refusal.
 *
 *===---------------------------------------------------------------------===*/

/* ncclGetVersion, the one the loader calls, is in FakeNcclVersion.c. */

#define EXISTS(name)                                                           \
  int nccl##name(void) { return 0; }

EXISTS(GetUniqueId)
EXISTS(GetErrorString)
EXISTS(GetLastError)
EXISTS(CommInitRank)
EXISTS(CommInitRankConfig)
EXISTS(CommSplit)
EXISTS(CommFinalize)
EXISTS(CommDestroy)
EXISTS(CommAbort)
EXISTS(CommGetAsyncError)
EXISTS(CommRegister)
EXISTS(CommDeregister)
EXISTS(RedOpCreatePreMulSum)
EXISTS(RedOpDestroy)
EXISTS(Reduce)
EXISTS(Broadcast)
EXISTS(AllReduce)
EXISTS(ReduceScatter)
EXISTS(AllGather)
EXISTS(Recv)
EXISTS(GroupStart)
EXISTS(GroupEnd)
EXISTS(CommSuspend)
#ifndef FAKE_NCCL_WITHOUT_SEND
EXISTS(Send)
#endif
