//===- Multicast.cpp - SwitchChannel (NVLS) setup and its guard -----------===//
//
// Binding a buffer to a multicast object, per group:
//   1. every member checks its buffer (a cuMem allocation, granule-aligned
//      room) and all ranks agree on the object's size (allGather);
//   2. the group's first rank creates the object and exports it as a file
//      descriptor, which members in its process import directly and the
//      others receive over a Unix socket (each member then holds a handle
//      of its own);
//   3. every member adds its device (all before any bind), binds its buffer
//      and maps the object into its address space.
// Each step ends in an allGather of ok flags, so a failure on one rank
// fails every rank instead of leaving the others waiting.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Multicast.h"
#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/Communicator.h"
#include "mscclc/runtime/Cuda.h"
#include "mscclc/runtime/FdPassing.h"
#include "mscclc/runtime/Settings.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

namespace mscclc::rt {

Status multicastAllowed() {
  int64_t nvls = 0;
  MSCCLC_TRY(get(setting::NcclNvlsEnable, &nvls));
  if (nvls == 0)
    return unsupported(
        "SwitchChannel setup refused: NVLink multicast is disabled on this "
        "machine (NCCL_NVLS_ENABLE=0); compile the algorithm with memory or "
        "port channels instead");
  bool off = false;
  MSCCLC_TRY(get(setting::DisableMulticast, &off));
  if (off)
    return unsupported(fmt::format(
        "SwitchChannel setup refused: NVLink multicast is disabled on this "
        "machine ({}={}); compile the algorithm with memory or port channels "
        "instead",
        setting::DisableMulticast.name(),
        lookup(SettingId::DisableMulticast)->text));
  return Status::ok();
}

namespace {

/// Multicast objects bind whole granules; 2 MiB is the minimum on every
/// NVSwitch system so far, so allocations use at least that.
constexpr size_t kMinGranule = size_t(2) << 20;

size_t roundUp(size_t v, size_t to) { return (v + to - 1) / to * to; }

#if !MSCCLC_TARGET_HIP // AMD GPUs have neither (Cuda.h)
Status needVmm(const DriverApi *api) {
  if (!api->deviceGet || !api->memCreate || !api->memMap || !api->memUnmap ||
      !api->memAddressReserve || !api->memAddressFree || !api->memSetAccess ||
      !api->memGetAllocationGranularity || !api->memRetainAllocationHandle ||
      !api->memExportToShareableHandle || !api->memImportFromShareableHandle)
    return unsupported("this CUDA driver lacks the virtual memory management "
                       "entry points (cuMemCreate ...)");
  return Status::ok();
}

CUmemAccessDesc readWrite(int device) {
  CUmemAccessDesc d = {};
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = device;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return d;
}
#endif

/// What each rank tells the others at every step of bindMulticast.
struct BindRecord {
  int32_t member = 0; ///< in the group
  int32_t ok = 1;
  int32_t pid = 0;
  int32_t reserved = 0;
  uint64_t need = 0;   ///< bytes from the aligned start to the buffer's end
  uint64_t room = 0;   ///< bytes from the aligned start to the allocation's end
  int32_t fd = -1;     ///< the creator's exported object (in its process)
  int32_t reserved2 = 0;
  char socket[64] = {};
  FdToken token = {}; ///< what the socket's clients present
  char error[192] = {};
};

/// allGather of `mine`; fails on every rank when any rank is not ok, with
/// the first failing rank's message.
Status agree(Bootstrap &bootstrap, const BindRecord &mine, const char *step,
             std::vector<BindRecord> *all) {
  all->assign(size_t(bootstrap.nranks()), BindRecord());
  (*all)[size_t(bootstrap.rank())] = mine;
  MSCCLC_TRY(bootstrap.allGather(all->data(), sizeof(BindRecord))
                 .context(fmt::format("multicast setup ({})", step)));
  for (int r = 0; r < bootstrap.nranks(); ++r)
    if (!(*all)[size_t(r)].ok)
      return Status(Code::CudaError,
                    fmt::format("multicast setup ({}) failed on rank {}: {}",
                                step, r, (*all)[size_t(r)].error));
  return Status::ok();
}

/// Records a failed status in `rec` for agree().
void note(BindRecord &rec, const Status &s) {
  if (s.isOk())
    return;
  rec.ok = 0;
  snprintf(rec.error, sizeof(rec.error), "%s", s.message().c_str());
}

} // namespace

#if MSCCLC_TARGET_HIP

/// What mscclcMemAlloc and SwitchChannels would need.
static Status noVmmOnHip(const char *what) {
  return unsupported(fmt::format(
      "{} needs CUDA's virtual memory and NVLink multicast, which HIP and "
      "AMD GPUs do not have (this libmscclc is built for HIP): allocate "
      "buffers with hipMalloc and compile the algorithm without switch "
      "channels",
      what));
}

Status allocateCuMem(int, size_t, void **ptr) {
  *ptr = nullptr;
  return noVmmOnHip("mscclcMemAlloc");
}

Status freeCuMem(void *ptr) {
  return ptr ? noVmmOnHip("mscclcMemFree") : Status::ok();
}

#else

Status allocateCuMem(int device, size_t bytes, void **ptr) {
  *ptr = nullptr;
  if (bytes == 0)
    return invalidArgument("mscclcMemAlloc of 0 bytes");
  const DriverApi *api = nullptr;
  MSCCLC_TRY(driverApi(&api));
  MSCCLC_TRY(needVmm(api));
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t granule = 0;
  MSCCLC_CUDA_CHECK(api->memGetAllocationGranularity(
      &granule, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  granule = std::max(roundUp(kMinGranule, granule), granule);
  size_t size = roundUp(bytes, granule);
  CUmemGenericAllocationHandle handle;
  MSCCLC_CUDA_CHECK(api->memCreate(&handle, size, &prop, 0));
  CUdeviceptr va = 0;
  CUresult err = api->memAddressReserve(&va, size, granule, 0, 0);
  if (err == CUDA_SUCCESS) {
    err = api->memMap(va, size, 0, handle, 0);
    if (err != CUDA_SUCCESS)
      (void)api->memAddressFree(va, size);
  }
  // The mapping keeps the memory alive from here on.
  (void)api->memRelease(handle);
  if (err != CUDA_SUCCESS)
    return toStatus(err, "cuMemMap", __FILE__, __LINE__);
  // This device and every device that can reach it as a peer.
  std::vector<CUmemAccessDesc> access = {readWrite(device)};
  int count = 0;
  MSCCLC_CUDA_CHECK(cudaGetDeviceCount(&count));
  for (int d = 0; d < count; ++d) {
    int can = 0;
    if (d != device && cudaDeviceCanAccessPeer(&can, d, device) == cudaSuccess &&
        can)
      access.push_back(readWrite(d));
  }
  err = api->memSetAccess(va, size, access.data(), access.size());
  if (err != CUDA_SUCCESS) {
    (void)api->memUnmap(va, size);
    (void)api->memAddressFree(va, size);
    return toStatus(err, "cuMemSetAccess", __FILE__, __LINE__);
  }
  *ptr = reinterpret_cast<void *>(va);
  return Status::ok();
}

Status freeCuMem(void *ptr) {
  if (!ptr)
    return Status::ok();
  const DriverApi *api = nullptr;
  MSCCLC_TRY(driverApi(&api));
  MSCCLC_TRY(needVmm(api));
  CUdeviceptr base = 0;
  size_t size = 0;
  MSCCLC_CUDA_CHECK(api->memGetAddressRange(
      &base, &size, reinterpret_cast<CUdeviceptr>(ptr)));
  if (base != reinterpret_cast<CUdeviceptr>(ptr))
    return invalidArgument(
        fmt::format("{} was not returned by mscclcMemAlloc", ptr));
  // Kernels still using the memory must be done with it.
  MSCCLC_CUDA_CHECK(cudaDeviceSynchronize());
  MSCCLC_CUDA_CHECK(api->memUnmap(base, size));
  MSCCLC_CUDA_CHECK(api->memAddressFree(base, size));
  return Status::ok();
}

namespace {

/// The CUDA driver behind bindMulticast(Communicator &, ...).
const MulticastDriver &cudaMulticastDriver(const DriverApi *api) {
  static const MulticastDriver driver = [api] {
    MulticastDriver d;
    d.allocationOf = [api](const void *local, uint64_t *base,
                           uint64_t *size) -> Status {
      CUmemGenericAllocationHandle h;
      if (!local || api->memRetainAllocationHandle(
                        &h, const_cast<void *>(local)) != CUDA_SUCCESS) {
        (void)cudaGetLastError();
        return invalidArgument(fmt::format(
            "the buffer {} is not a cuMem allocation: allocate the buffers "
            "of SwitchChannel programs with mscclcMemAlloc",
            local));
      }
      (void)api->memRelease(h);
      CUdeviceptr b = 0;
      size_t n = 0;
      MSCCLC_CUDA_CHECK(api->memGetAddressRange(
          &b, &n, reinterpret_cast<CUdeviceptr>(local)));
      *base = b;
      *size = n;
      return Status::ok();
    };
    auto props = [](unsigned devices, uint64_t bytes) {
      CUmulticastObjectProp prop = {};
      prop.numDevices = devices;
      prop.size = bytes;
      prop.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
      return prop;
    };
    d.granularity = [api, props](unsigned devices, uint64_t bytes,
                                 uint64_t *granule) -> Status {
      CUmulticastObjectProp prop = props(devices, bytes);
      size_t g = 0;
      MSCCLC_CUDA_CHECK(api->multicastGetGranularity(
          &g, &prop, CU_MULTICAST_GRANULARITY_MINIMUM));
      *granule = g;
      return Status::ok();
    };
    d.create = [api, props](unsigned devices, uint64_t bytes,
                            uint64_t *handle) -> Status {
      CUmulticastObjectProp prop = props(devices, bytes);
      CUmemGenericAllocationHandle mc;
      MSCCLC_CUDA_CHECK(api->multicastCreate(&mc, &prop));
      *handle = mc;
      return Status::ok();
    };
    d.exportFd = [api](uint64_t handle, int *fd) -> Status {
      MSCCLC_CUDA_CHECK(api->memExportToShareableHandle(
          fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
      return Status::ok();
    };
    d.importFd = [api](int fd, uint64_t *handle) -> Status {
      CUmemGenericAllocationHandle mc;
      MSCCLC_CUDA_CHECK(api->memImportFromShareableHandle(
          &mc, reinterpret_cast<void *>(static_cast<uintptr_t>(fd)),
          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
      *handle = mc;
      return Status::ok();
    };
    d.addDevice = [api](uint64_t handle, int device) -> Status {
      DeviceGuard guard(device);
      CUdevice dev;
      MSCCLC_CUDA_CHECK(api->deviceGet(&dev, device));
      MSCCLC_CUDA_CHECK(api->multicastAddDevice(handle, dev));
      return Status::ok();
    };
    d.bindAndMap = [api](uint64_t handle, int device, uint64_t start,
                         uint64_t bytes, uint64_t granule, uint64_t *va,
                         int *stage) -> Status {
      DeviceGuard guard(device);
      MSCCLC_CUDA_CHECK(api->multicastBindAddr(handle, 0, start, bytes, 0));
      *stage = 1;
      CUdeviceptr at = 0;
      MSCCLC_CUDA_CHECK(api->memAddressReserve(&at, bytes, granule, 0, 0));
      *va = at;
      *stage = 2;
      MSCCLC_CUDA_CHECK(api->memMap(at, bytes, 0, handle, 0));
      *stage = 3;
      CUmemAccessDesc access = readWrite(device);
      MSCCLC_CUDA_CHECK(api->memSetAccess(at, bytes, &access, 1));
      return Status::ok();
    };
    d.release = [api](uint64_t handle, int device, uint64_t va,
                      uint64_t bytes, int stage) {
      DeviceGuard guard(device);
      // Kernels of this device may still use the mapping.
      MSCCLC_CUDA_WARN(cudaDeviceSynchronize());
      if (stage >= 3)
        MSCCLC_CUDA_WARN(api->memUnmap(va, bytes));
      if (stage >= 2)
        MSCCLC_CUDA_WARN(api->memAddressFree(va, bytes));
      CUdevice dev;
      if (stage >= 1 && api->deviceGet(&dev, device) == CUDA_SUCCESS)
        MSCCLC_CUDA_WARN(api->multicastUnbind(handle, dev, 0, bytes));
      MSCCLC_CUDA_WARN(api->memRelease(handle));
    };
    return d;
  }();
  return driver;
}

} // namespace

#endif // MSCCLC_TARGET_HIP

MulticastRegion::~MulticastRegion() {
  if (haveHandle_)
    driver_.release(handle_, device_, va_, size_, stage_);
}

Status bindMulticast(Communicator &comm, const std::vector<int> &group,
                     const void *local, std::unique_ptr<MulticastRegion> *out) {
  out->reset();
  // The guard comes first: nothing below runs where multicast is off.
  MSCCLC_TRY(multicastAllowed());
#if MSCCLC_TARGET_HIP
  (void)comm, (void)group, (void)local;
  return noVmmOnHip("a SwitchChannel");
#else
  const DriverApi *api = nullptr;
  MSCCLC_TRY(driverApi(&api));
  MSCCLC_TRY(needVmm(api));
  if (!api->multicastCreate || !api->multicastAddDevice ||
      !api->multicastBindAddr || !api->multicastGetGranularity ||
      !api->multicastUnbind)
    return unsupported("this CUDA driver has no multicast entry points");
  return bindMulticast(comm.bootstrap(), comm.device(),
                       cudaMulticastDriver(api), group, local, out);
#endif
}

Status bindMulticast(Bootstrap &bootstrap, int device,
                     const MulticastDriver &driver,
                     const std::vector<int> &group, const void *local,
                     std::unique_ptr<MulticastRegion> *out) {
  out->reset();
  if (group.empty())
    return invalidArgument("a multicast group needs ranks");
  const int me = bootstrap.rank();
  const int root = group.front();
  const bool member = std::count(group.begin(), group.end(), me) > 0;
  const unsigned devices = unsigned(group.size());

  // 1. Check the buffer and agree on the size.
  BindRecord mine;
  mine.member = member;
  mine.pid = int32_t(getpid());
  uint64_t granule = 0, start = 0;
  if (member) {
    Status s = [&]() -> Status {
      uint64_t base = 0, size = 0;
      MSCCLC_TRY(driver.allocationOf(local, &base, &size));
      MSCCLC_TRY(driver.granularity(devices, size, &granule));
      uint64_t at = reinterpret_cast<uint64_t>(local);
      start = base + (at - base) / granule * granule;
      mine.need = roundUp(base + size - start, granule);
      mine.room = base + size - start;
      if (mine.room < mine.need)
        return invalidArgument(fmt::format(
            "the allocation holding {} does not end on a multicast granule "
            "({} bytes): allocate it with mscclcMemAlloc",
            local, static_cast<unsigned long long>(granule)));
      return Status::ok();
    }();
    note(mine, s);
  }
  std::vector<BindRecord> all;
  MSCCLC_TRY(agree(bootstrap, mine, "checking buffers", &all));
  // Later steps reuse `all`; the process ids are needed until the end.
  std::vector<int32_t> pids;
  for (const BindRecord &rec : all)
    pids.push_back(rec.pid);
  uint64_t size = 0, room = UINT64_MAX;
  for (int r : group) {
    size = std::max(size, all[size_t(r)].need);
    room = std::min(room, all[size_t(r)].room);
  }
  if (room < size)
    return invalidArgument(fmt::format(
        "SwitchChannel buffers differ in size across the group ({} bytes "
        "needed, {} available on some rank): allocate them alike",
        static_cast<unsigned long long>(size),
        static_cast<unsigned long long>(room)));

  std::unique_ptr<MulticastRegion> region(new MulticastRegion(driver));
  region->device_ = device;
  region->size_ = size;

  // 2. The root creates the object and hands it out.
  static std::atomic<int> serial{0}; // socket names of this process
  BindRecord created;
  int remote = 0; // members in other processes
  for (int r : group)
    remote += pids[size_t(r)] != pids[size_t(root)];
  std::unique_ptr<FdServer> server;
  int exported = -1;
  if (me == root) {
    Status s = [&]() -> Status {
      MSCCLC_TRY(driver.create(devices, size, &region->handle_));
      region->haveHandle_ = true;
      if (devices == 1)
        return Status::ok();
      MSCCLC_TRY(driver.exportFd(region->handle_, &exported));
      created.fd = exported;
      if (remote == 0)
        return Status::ok();
      snprintf(created.socket, sizeof(created.socket), "mscclc-mc-%d-%d",
               int(getpid()), serial++);
      MSCCLC_TRY(randomBytes(created.token.bytes, sizeof(created.token.bytes)));
      return FdServer::listen(created.socket, &server);
    }();
    note(created, s);
  }
  Status agreed =
      agree(bootstrap, created, "creating the multicast object", &all);
  if (!agreed.isOk()) {
    if (exported >= 0)
      close(exported);
    return agreed;
  }
  const BindRecord fromRoot = all[size_t(root)];
  BindRecord imported;
  if (me == root) {
    if (server)
      note(imported, server->serve(exported, remote, created.token, 60000));
  } else if (member) {
    Status s = [&]() -> Status {
      int fd = fromRoot.fd; // valid here when we share the root's process
      bool received = pids[size_t(me)] != pids[size_t(root)];
      if (received)
        MSCCLC_TRY(receiveFd(fromRoot.socket, fromRoot.token, 60000, &fd));
      Status got = driver.importFd(fd, &region->handle_);
      if (received)
        close(fd);
      MSCCLC_TRY(got);
      region->haveHandle_ = true;
      return Status::ok();
    }();
    note(imported, s);
  }
  agreed = agree(bootstrap, imported, "sharing the multicast object", &all);
  // Every member holds its own handle now (or failed): the export can go.
  if (exported >= 0)
    close(exported);
  MSCCLC_TRY(agreed);

  // 3. Add every device, then bind and map.
  BindRecord added;
  if (member)
    note(added, driver.addDevice(region->handle_, device));
  MSCCLC_TRY(agree(bootstrap, added, "adding devices", &all));
  BindRecord bound;
  if (member) {
    note(bound, driver.bindAndMap(region->handle_, device, start, size,
                                  granule, &region->va_, &region->stage_));
    region->mcPtr_ = reinterpret_cast<void *>(
        region->va_ + (reinterpret_cast<uint64_t>(local) - start));
  }
  MSCCLC_TRY(agree(bootstrap, bound, "binding buffers", &all));
  if (member)
    *out = std::move(region);
  return Status::ok();
}

} // namespace mscclc::rt
