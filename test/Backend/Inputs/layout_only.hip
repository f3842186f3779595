// Layout.h alone, in HIP device code: the scratch layout must not need the
// rest of the device library (or hip_runtime.h) to compile.
#include "mscclc/device/Layout.h"

__global__ void layoutOnly(mscclc_u64 *p) {
  p[0] = mscclc_chunk_begin(1, p[1], 3) + mscclc_packets_per_chunk(p[1], 3, 2);
}
