/*===- CudaCheck.h - Stop at a failed CUDA or mscclc call ------*- C -*-===//
 *
 * For programs whose only answer to a failed call is to stop (tests,
 * examples, benchmarks): MSCCLC_CUDA_OR_EXIT(call) checks a cudaError_t,
 * MSCCLC_OR_EXIT(call) an mscclcResult_t. On failure each prints
 * `file:line: call failed: ...` with the error's text (and, for mscclc,
 * mscclcGetLastError(), which says what went wrong) to stderr and exits
 * with status 1. Libraries should not use them: libmscclc returns errors.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MSCCLC_CUDACHECK_H
#define MSCCLC_CUDACHECK_H

#include "mscclc/mscclc.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define MSCCLC_CUDA_OR_EXIT(call)                                              \
  do {                                                                         \
    cudaError_t mscclcCudaErr_ = (call);                                       \
    if (mscclcCudaErr_ != cudaSuccess) {                                       \
      fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__,       \
              #call, cudaGetErrorString(mscclcCudaErr_),                       \
              cudaGetErrorName(mscclcCudaErr_));                               \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define MSCCLC_OR_EXIT(call)                                                   \
  do {                                                                         \
    mscclcResult_t mscclcResult_ = (call);                                     \
    if (mscclcResult_ != mscclcSuccess) {                                      \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call, \
              mscclcGetErrorString(mscclcResult_), mscclcGetLastError());      \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#endif /* MSCCLC_CUDACHECK_H */
