//===- CudaNamesForHip.h - CUDA names of the runtime, in HIP ---*- C++ -*-===//
//
// The runtime is written once, in CUDA's spelling. HIP mirrors the CUDA
// runtime and module API call for call, so a HIP build (MSCCLC_TARGET_HIP,
// CMake MSCCLC_GPU_BACKEND=hip) compiles the same sources with each name
// below replaced by its HIP counterpart; this table and the #if blocks of
// Cuda.cpp are the whole vendor layer. Only Cuda.h includes this header, and
// only in a HIP build: the CUDA build sees none of it.
//
// Types are aliases; functions and constants are macros, because HIP
// overloads some functions (typed-pointer templates of hipMalloc and
// hipHostMalloc) and the runtime passes typed pointers.
//
// What has no HIP counterpart is not named here, so using it is a compile
// error in a HIP build: the CUDA driver entry-point query, the virtual
// memory (cuMem*) and multicast calls. Their users are compiled out for HIP
// (Cuda.cpp, Multicast.cpp) and report at run time that AMD GPUs lack them.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_CUDANAMESFORHIP_H
#define MSCCLC_RUNTIME_CUDANAMESFORHIP_H

#include <hip/hip_runtime_api.h>

// Runtime API types.
using cudaError_t = hipError_t;
using cudaStream_t = hipStream_t;
using cudaIpcMemHandle_t = hipIpcMemHandle_t;
using cudaStreamCaptureStatus = hipStreamCaptureStatus;
using cudaStreamCaptureMode = hipStreamCaptureMode;
// Module (driver) API types: HIP's module calls return hipError_t too.
using CUresult = hipError_t;
using CUdeviceptr = hipDeviceptr_t; // void *, where CUDA's is an integer
using CUfunction = hipFunction_t;
using CUmodule = hipModule_t;
using CUstream = hipStream_t;

// Errors.
#define cudaSuccess hipSuccess
#define cudaErrorAlreadyMapped hipErrorAlreadyMapped
#define cudaErrorPeerAccessAlreadyEnabled hipErrorPeerAccessAlreadyEnabled
#define CUDA_SUCCESS hipSuccess
#define CUDA_ERROR_NOT_FOUND hipErrorNotFound
#define cudaGetLastError hipGetLastError
#define cudaGetErrorString hipGetErrorString
#define cudaGetErrorName hipGetErrorName

// Devices.
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDevice hipGetDevice
#define cudaSetDevice hipSetDevice
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define cudaDeviceGetPCIBusId hipDeviceGetPCIBusId
#define cudaDeviceCanAccessPeer hipDeviceCanAccessPeer
#define cudaDeviceEnablePeerAccess hipDeviceEnablePeerAccess

// Memory. cudaHostAlloc's HIP name is hipHostMalloc (hipHostAlloc is
// deprecated), with flags of the same meaning; the runtime's mapped host
// memory (FIFO, tail, abort flag) is polled by GPU and CPU while kernels
// run, so it is asked for coherent, which hipHostMalloc may not default to.
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaMemset hipMemset
#define cudaMemsetAsync hipMemsetAsync
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemcpyDefault hipMemcpyDefault
#define cudaHostAlloc hipHostMalloc
#define cudaHostAllocMapped (hipHostMallocMapped | hipHostMallocCoherent)
#define cudaHostAllocPortable hipHostMallocPortable
#define cudaFreeHost hipHostFree
#define cudaHostGetDevicePointer hipHostGetDevicePointer

// Inter-process memory handles.
#define cudaIpcGetMemHandle hipIpcGetMemHandle
#define cudaIpcOpenMemHandle hipIpcOpenMemHandle
#define cudaIpcCloseMemHandle hipIpcCloseMemHandle
#define cudaIpcMemLazyEnablePeerAccess hipIpcMemLazyEnablePeerAccess

// Streams and graph capture.
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamIsCapturing hipStreamIsCapturing
#define cudaStreamCaptureStatusNone hipStreamCaptureStatusNone
#define cudaStreamCaptureModeRelaxed hipStreamCaptureModeRelaxed
#define cudaThreadExchangeStreamCaptureMode hipThreadExchangeStreamCaptureMode
#define cudaEvent_t hipEvent_t
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventDisableTiming hipEventDisableTiming
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventDestroy hipEventDestroy

// Module API: the DriverApi table of Cuda.h, filled with these in a HIP
// build (HIP links them directly; there is no entry-point query).
#define cuModuleLoadData hipModuleLoadData
#define cuModuleUnload hipModuleUnload
#define cuModuleGetFunction hipModuleGetFunction
#define cuModuleGetGlobal hipModuleGetGlobal
#define cuLaunchKernel hipModuleLaunchKernel
#define cuOccupancyMaxActiveBlocksPerMultiprocessor                            \
  hipModuleOccupancyMaxActiveBlocksPerMultiprocessor
#define cuStreamWriteValue64 hipStreamWriteValue64
#define CU_STREAM_WRITE_VALUE_DEFAULT 0u
#define cuCtxGetCurrent hipCtxGetCurrent
#define cuMemGetAddressRange hipMemGetAddressRange
#define cuPointerGetAttribute hipPointerGetAttribute
#define CU_POINTER_ATTRIBUTE_BUFFER_ID HIP_POINTER_ATTRIBUTE_BUFFER_ID

#endif // MSCCLC_RUNTIME_CUDANAMESFORHIP_H
