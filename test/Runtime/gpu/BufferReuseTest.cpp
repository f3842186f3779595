//===- BufferReuseTest.cpp - A buffer reallocated larger at its address ---===//
//
// An application frees a buffer and gets a larger one at the same address
// (PyTorch's caching allocator, a VMM pool that maps more memory): the
// runtime must not serve it with the buffer context of the old one, whose
// port channels hold the old allocation's extent (a put into the new part
// is then refused as running past the buffer) or whose peers map the old
// memory.
//
// Each rank's input is a VMM allocation mapped at the start of an address
// range reserved for it: first of `small` bytes, then, after a run, freed
// and replaced by one of twice the size at the same address, and run
// again; then back to the small one. A first run through other buffers
// grows the scratch to the large size beforehand, since a scratch growth
// drops every context and would hide a stale one. The program is stdlib/reducescatter_port, whose
// port channels put from the input into the peers' scratch (no peer maps
// the input, so VMM memory serves in one process). Results are compared
// with a CPU reference (sums of small integers: exact in f32).
//
//   runtime-gpu-buffer-reuse --stdlib DIR [--ranks N]
// Exit: 0 pass, 1 fail, 77 skipped (no GPU, or one GPU and no --ranks).
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtil.h"
#include "mscclc/runtime/Cuda.h"

using namespace gputest;

namespace {

/// The driver's entry points, loaded as the runtime loads them (the test
/// must start, and skip, where no driver is installed).
const mscclc::rt::DriverApi *api = nullptr;

/// A failed driver call ends the test, in the runtime's words for it.
#define CHECK_DRV(call)                                                        \
  do {                                                                         \
    CUresult e_ = api->call;                                                   \
    if (e_ != CUDA_SUCCESS) {                                                  \
      fprintf(stderr, "%s\n",                                                  \
              mscclc::rt::toStatus(e_, #call, __FILE__, __LINE__)             \
                  .message()                                                   \
                  .c_str());                                                   \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/// One rank's input: VMM allocations mapped one at a time at the start of
/// an address range reserved for them (`capacity` bytes), so that a new
/// one comes at the old one's address.
struct MovableBuffer {
  int device = 0;
  std::vector<int> peers; ///< devices that get access
  CUdeviceptr home = 0;
  size_t capacity = 0, bytes = 0;
  CUmemGenericAllocationHandle handle = 0;

  void reserve(size_t size) {
    capacity = size;
    CHECK_DRV(memAddressReserve(&home, size, 0, 0, 0));
  }
  /// Frees the old allocation and maps a new one of `size` bytes at home.
  void replace(size_t size) {
    unmap();
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    CHECK_DRV(memCreate(&handle, size, &prop, 0));
    CHECK_DRV(memMap(home, size, 0, handle, 0));
    std::vector<CUmemAccessDesc> access;
    for (int d : peers) {
      CUmemAccessDesc a = {};
      a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      a.location.id = d;
      a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      access.push_back(a);
    }
    CHECK_DRV(memSetAccess(home, size, access.data(), access.size()));
    bytes = size;
  }
  void unmap() {
    if (!bytes)
      return;
    CHECK_DRV(memUnmap(home, bytes));
    CHECK_DRV(memRelease(handle));
    bytes = 0;
  }
  void free() {
    unmap();
    CHECK_DRV(memAddressFree(home, capacity));
  }
  void *ptr() const { return reinterpret_cast<void *>(home); }
};

unsigned long long bufferId(const void *p) {
  unsigned long long id = 0;
  CHECK_DRV(pointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                  reinterpret_cast<CUdeviceptr>(p)));
  return id;
}

/// Rank r's input element i in a run: small integers, exact sums in f32.
float inputValue(int rank, size_t i, int run) {
  return float((rank + 1) * 5 + int(i % 11) + run);
}

} // namespace

int main(int argc, char **argv) {
  std::string stdlib;
  int ranks = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--stdlib" && i + 1 < argc) stdlib = argv[++i];
    else if (a == "--ranks" && i + 1 < argc) ranks = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s --stdlib DIR [--ranks N]\n", argv[0]);
      return 2;
    }
  }
  if (stdlib.empty()) {
    fprintf(stderr, "--stdlib DIR is required\n");
    return 2;
  }
  setSafeEnvironment();
  RankLayout layout;
  if (!chooseLayout(ranks, &layout))
    return kSkip;
  int n = layout.ranks;
  std::vector<mscclcComm_t> comms(static_cast<size_t>(n));
  std::vector<int> devices = layout.devices();
  MSCCLC_OR_EXIT(mscclcCommInitAll(comms.data(), n, devices.data()));
  mscclc::rt::Status loaded = mscclc::rt::driverApi(&api);
  if (!loaded.isOk()) {
    fprintf(stderr, "loading the CUDA driver: %s\n", loaded.message().c_str());
    return 1;
  }

  mscclcProgram_t prog = nullptr;
  mscclcCompileOptions opts = MSCCLC_COMPILE_OPTIONS_INIT;
  opts.ranks = n;
  std::string path = stdlib + "/reducescatter_port.mscl";
  MSCCLC_OR_EXIT(mscclcProgramCompileFile(&prog, path.c_str(), &opts));

  // The small input: 2 MiB granules per rank's block, so both sizes are
  // whole granules.
  size_t granule = 0;
  {
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CHECK_DRV(memGetAllocationGranularity(&granule, &prop,
                                            CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  }
  size_t smallCount = std::max<size_t>(granule, 2u << 20) / sizeof(float);
  size_t smallBytes = smallCount * sizeof(float) * size_t(n);

  std::vector<MovableBuffer> inputs(static_cast<size_t>(n));
  std::vector<void *> outputs(static_cast<size_t>(n));
  std::vector<cudaStream_t> streams(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    MovableBuffer &b = inputs[size_t(r)];
    b.device = layout.deviceOf(r);
    for (int g = 0; g < layout.gpus; ++g)
      b.peers.push_back(g);
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(b.device));
    b.reserve(2 * smallBytes);
    MSCCLC_CUDA_OR_EXIT(cudaMalloc(&outputs[size_t(r)], 2 * smallCount * sizeof(float)));
    MSCCLC_CUDA_OR_EXIT(cudaStreamCreateWithFlags(&streams[size_t(r)], cudaStreamNonBlocking));
  }

  // Runs the program on `count` elements per block from inputs `in` (one
  // per rank, filled here) and checks every rank's output.
  int passed = 0, failed = 0, run = 0;
  auto runCase = [&](size_t count, const std::vector<void *> &in,
                     const char *what) {
    ++run;
    size_t inputElems = count * size_t(n);
    for (int r = 0; r < n; ++r) {
      std::vector<float> host(inputElems);
      for (size_t i = 0; i < inputElems; ++i)
        host[i] = inputValue(r, i, run);
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
      MSCCLC_CUDA_OR_EXIT(cudaMemcpy(in[size_t(r)], host.data(),
                                     inputElems * sizeof(float),
                                     cudaMemcpyHostToDevice));
    }
    MSCCLC_OR_EXIT(mscclcGroupStart());
    std::string err;
    for (int r = 0; r < n; ++r)
      if (mscclcProgramRun(prog, comms[size_t(r)], in[size_t(r)],
                           outputs[size_t(r)], count, mscclcFloat32, mscclcSum,
                           streams[size_t(r)]) != mscclcSuccess &&
          err.empty())
        err = mscclcGetLastError();
    if (mscclcGroupEnd() != mscclcSuccess && err.empty())
      err = mscclcGetLastError();
    for (int r = 0; r < n; ++r) {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
      if (mscclcProgramCheck(prog, comms[size_t(r)], mscclcFloat32, mscclcSum,
                             streams[size_t(r)]) != mscclcSuccess &&
          err.empty())
        err = mscclcGetLastError();
    }
    size_t bad = 0;
    for (int r = 0; r < n && err.empty(); ++r) {
      std::vector<float> got(count);
      MSCCLC_CUDA_OR_EXIT(cudaMemcpy(got.data(), outputs[size_t(r)],
                                     count * sizeof(float),
                                     cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < count; ++i) {
        float want = 0;
        for (int p = 0; p < n; ++p)
          want += inputValue(p, size_t(r) * count + i, run);
        if (got[i] != want && bad++ < 3)
          fprintf(stderr, "rank %d element %zu: got %g, want %g\n", r, i,
                  double(got[i]), double(want));
      }
    }
    bool ok = err.empty() && bad == 0;
    ++(ok ? passed : failed);
    printf("%s reducescatter_port f32 count=%zu, %s%s%s\n", ok ? "PASS" : "FAIL",
           count, what, err.empty() ? "" : ": ", err.c_str());
    if (bad)
      printf("  %zu wrong elements\n", bad);
  };
  // Maps a new allocation of `count` blocks' bytes at every rank's home.
  auto remap = [&](size_t count) {
    std::vector<unsigned long long> oldIds(static_cast<size_t>(n));
    std::vector<void *> at(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      MovableBuffer &b = inputs[size_t(r)];
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(b.device));
      if (b.bytes)
        oldIds[size_t(r)] = bufferId(b.ptr());
      b.replace(count * size_t(n) * sizeof(float));
      at[size_t(r)] = b.ptr();
    }
    CUdeviceptr base = 0;
    size_t range = 0;
    CHECK_DRV(memGetAddressRange(&base, &range, inputs[0].home));
    printf("rank 0's input: %zu bytes mapped, the driver's range %zu bytes, "
           "allocation id %s\n", inputs[0].bytes, range,
           oldIds[0] == bufferId(inputs[0].ptr()) ? "unchanged" : "new");
    return at;
  };

  // The scratch first grows to the large count, through other buffers: it
  // does not grow again below, so the contexts built for the small input
  // stay (a scratch growth drops every context).
  {
    std::vector<void *> other(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
      MSCCLC_CUDA_OR_EXIT(cudaMalloc(&other[size_t(r)], 2 * smallBytes));
    }
    runCase(2 * smallCount, other, "other buffers (the scratch grows)");
    for (int r = 0; r < n; ++r) {
      MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
      MSCCLC_CUDA_OR_EXIT(cudaFree(other[size_t(r)]));
    }
  }
  runCase(smallCount, remap(smallCount), "input new");
  runCase(2 * smallCount, remap(2 * smallCount),
          "input reallocated twice as large at the same address");
  runCase(smallCount, remap(smallCount),
          "input reallocated half as large at the same address");

  for (int r = 0; r < n; ++r) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
    MSCCLC_CUDA_OR_EXIT(cudaStreamSynchronize(streams[size_t(r)]));
  }
  MSCCLC_OR_EXIT(mscclcProgramDestroy(prog));
  for (mscclcComm_t c : comms)
    MSCCLC_OR_EXIT(mscclcCommDestroy(c));
  for (int r = 0; r < n; ++r) {
    MSCCLC_CUDA_OR_EXIT(cudaSetDevice(layout.deviceOf(r)));
    inputs[size_t(r)].free();
    MSCCLC_CUDA_OR_EXIT(cudaFree(outputs[size_t(r)]));
    MSCCLC_CUDA_OR_EXIT(cudaStreamDestroy(streams[size_t(r)]));
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
