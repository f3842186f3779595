/*===- FakeNcclVersion.c - The fake NCCL's ncclGetVersion ----------------===//
 *
 * With nccl.h's type: the loader calls it through a pointer of that type,
 * and UBSan's -fsanitize=function checks that the two agree. Apart from
 * FakeNccl.c, whose stubs have no real prototypes.
 *
 *===---------------------------------------------------------------------===*/

#include "nccl.h"

ncclResult_t ncclGetVersion(int *version) {
  *version = 22907;
  return ncclSuccess;
}
