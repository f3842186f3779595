//===- FakeIbVerbs.cpp - A libibverbs with two made-up HCAs ---------------===//
//
// Loaded by IbVerbsTest and IbConnectionTest through MSCCLC_IBVERBS_LIBRARY:
// mlx5_0 (InfiniBand) and mlx5_1 (RoCE), two ports each, port 1 active and
// port 2 down; with FAKE_IBVERBS_NONE set, no device at all.
//
// The data path runs in process, as a loopback between the queue pairs
// this process made: a queue pair must go RESET -> INIT -> RTR -> RTS with
// the attributes a reliable connection needs; an RDMA write checks its
// local key and range and the remote key, range and access (keys work in
// their protection domain only), lands at once, and completes if signaled; a failed write puts the queue
// pair in the error state (later writes flush with an error). A send queue
// holds max_send_wr writes until a signaled completion is polled.
// fake_ibverbs_stall(1) makes ibv_poll_cq find nothing (a peer that does
// not answer); fake_ibverbs_writes() counts the writes that landed;
// fake_ibverbs_refuse_reg_mr(1) makes ibv_reg_mr fail (no nvidia-peermem
// for GPU memory). ibv_reg_dmabuf_mr takes any open descriptor and
// registers the range at `iova`, the address writes use.
// fake_ibverbs_lag(us) makes writes land late, as an HCA's do: each is
// executed (its source read, its keys checked) by a thread of the library
// `us` microseconds after it was posted, in the order posted, and completes
// only then; inline data is taken at the post. fake_ibverbs_break_thread
// acts on the queue pairs the calling thread made (a rank's, where ranks are
// threads): 1, its process died (the queue pairs are gone: writes to them
// fail as unanswered, their own flush with an error); 2, it stopped (its
// writes neither land nor complete).
//
// In a process with the CUDA runtime (runtime-gpu-collectives at virtual
// nodes), writes copy with cudaMemcpyAsync on a non-blocking stream of the
// writing thread, so they reach GPU memory; elsewhere with memcpy.
//
// FAKE_IBVERBS_HOST_ONLY=1 (read at each registration) makes an HCA without
// dma-buf or nvidia-peermem, one that registers host memory only:
// ibv_reg_dmabuf_mr fails with EOPNOTSUPP, as rdma-core's does where the
// provider or the kernel has no dma-buf support, and ibv_reg_mr fails with
// EFAULT, as the kernel's does, unless every page of the range lies in a
// mapping of this process that the CPU may read (and write, where the
// access asks for a write). Why that tells GPU memory from host memory
// without CUDA: a real ibv_reg_mr pins the range's pages through the kernel
// (ib_umem_get -> pin_user_pages), which succeeds only inside VMAs with
// those permissions and fails with EFAULT elsewhere; nvidia-peermem is what
// lets it reach GPU memory instead. cudaMalloc's unified addresses are
// either not mapped for the host at all or lie in the driver's
// inaccessible (PROT_NONE, "---p" in /proc/self/maps) reservations of the
// address space, so they fail; cudaHostAlloc's pinned memory is mapped
// readable and writable (from /dev/nvidiactl, or anonymous memory the
// driver pinned), so it registers. The check reads /proc/self/maps, which
// lists the VMAs with their permissions; mincore() would not do, as it
// succeeds on PROT_NONE reservations, so GPU memory inside one would look
// mapped. The GPU tests that use the switch check the runtime's log for
// the transport it chose, so a driver that mapped device memory for the
// CPU would fail them rather than pass over IB verbs.
//
//===----------------------------------------------------------------------===//

#include <infiniband/verbs.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fcntl.h>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

/// Copies a write's bytes: with the CUDA runtime where the process has it.
bool copyBytes(void *dst, const void *src, size_t n) {
  using CopyAsync = int (*)(void *, const void *, size_t, int, void *);
  using CreateStream = int (*)(void **, unsigned);
  using SyncStream = int (*)(void *);
  static const auto copy =
      reinterpret_cast<CopyAsync>(dlsym(RTLD_DEFAULT, "cudaMemcpyAsync"));
  static const auto create =
      reinterpret_cast<CreateStream>(dlsym(RTLD_DEFAULT, "cudaStreamCreateWithFlags"));
  static const auto sync =
      reinterpret_cast<SyncStream>(dlsym(RTLD_DEFAULT, "cudaStreamSynchronize"));
  if (!copy || !create || !sync) {
    memcpy(dst, src, n);
    return true;
  }
  // Not the legacy stream: a copy there would wait for kernels that wait
  // for this very write.
  thread_local void *stream = nullptr;
  constexpr int kMemcpyDefault = 4;
  constexpr unsigned kStreamNonBlocking = 1;
  if (!stream && create(&stream, kStreamNonBlocking) != 0)
    return false;
  return copy(dst, src, n, kMemcpyDefault, stream) == 0 && sync(stream) == 0;
}

ibv_device devices[2];
ibv_device *list[3] = {&devices[0], &devices[1], nullptr};
ibv_context contexts[2];
} // namespace

extern "C" {

ibv_device **ibv_get_device_list(int *n) {
  if (getenv("FAKE_IBVERBS_NONE")) {
    *n = 0;
    return nullptr;
  }
  strcpy(devices[0].name, "mlx5_0");
  strcpy(devices[1].name, "mlx5_1");
  *n = 2;
  return list;
}

void ibv_free_device_list(ibv_device **) {}

const char *ibv_get_device_name(ibv_device *d) { return d->name; }

int fakePostSend(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad);
int fakePollCq(ibv_cq *cq, int n, ibv_wc *wc);

ibv_context *ibv_open_device(ibv_device *d) {
  ibv_context *c = &contexts[d == &devices[0] ? 0 : 1];
  c->device = d;
  c->ops.post_send = fakePostSend;
  c->ops.poll_cq = fakePollCq;
  return c;
}

int ibv_close_device(ibv_context *) { return 0; }

int ibv_query_device(ibv_context *, ibv_device_attr *attr) {
  memset(attr, 0, sizeof(*attr));
  attr->phys_port_cnt = 2;
  return 0;
}

// The exported symbol, not the header's inline wrapper of the same name.
#undef ibv_query_port
int ibv_query_port(ibv_context *c, uint8_t port,
                   _compat_ibv_port_attr *compat) {
  // Callers pass a whole ibv_port_attr, whose leading fields these are.
  auto *attr = reinterpret_cast<ibv_port_attr *>(compat);
  memset(attr, 0, sizeof(*attr));
  attr->state = port == 1 ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
  attr->link_layer = c == &contexts[0] ? IBV_LINK_LAYER_INFINIBAND
                                       : IBV_LINK_LAYER_ETHERNET;
  attr->lid = c == &contexts[0] ? 7 : 0;
  attr->active_mtu = c == &contexts[0] ? IBV_MTU_4096 : IBV_MTU_1024;
  return 0;
}

int ibv_query_gid(ibv_context *c, uint8_t port, int index, ibv_gid *gid) {
  if (c != &contexts[1] || port != 1 || index > 3)
    return EINVAL;
  memset(gid->raw, 0, sizeof(gid->raw));
  gid->raw[0] = 0xfe;
  gid->raw[15] = uint8_t(index);
  return 0;
}

const char *ibv_wc_status_str(ibv_wc_status status) {
  switch (status) {
  case IBV_WC_SUCCESS: return "success";
  case IBV_WC_LOC_PROT_ERR: return "local protection error";
  case IBV_WC_REM_ACCESS_ERR: return "remote access error";
  case IBV_WC_WR_FLUSH_ERR: return "Work Request Flushed Error";
  case IBV_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
  default: return "other error";
  }
}

} // extern "C"

namespace {

std::mutex mutex; // the tests' ranks are threads
bool stalled = false;
bool refuseRegMr = false;
unsigned long long writes = 0;

struct FakeMr {
  ibv_mr mr;
  int access;
};
std::map<uint32_t, FakeMr *> regions; // by key (lkey == rkey)
uint32_t nextKey = 100;

struct FakeQp {
  ibv_qp qp;
  ibv_qp_cap cap;
  uint8_t port = 0;
  uint32_t destQpn = 0;
  bool errored = false;
  bool mute = false; ///< its writes vanish (fake_ibverbs_break_thread)
  std::thread::id owner;
  struct Entry {
    uint64_t wrId;
    bool signaled;
  };
  std::deque<Entry> sendQueue; // posted, not yet known complete
};
std::map<uint32_t, FakeQp *> queuePairs; // by number; the dead ones left
std::set<FakeQp *> allQps;                // until destroyed
uint32_t nextQpn = 0x100;

struct FakeCq {
  ibv_cq cq;
  std::deque<ibv_wc> done;
};

FakeQp *fakeOf(ibv_qp *qp) { return reinterpret_cast<FakeQp *>(qp); }

/// Whether the region of `key`, in protection domain `pd`, holds
/// [addr, addr + length) with `access` (a key works only in its domain).
bool covers(uint32_t key, ibv_pd *pd, uint64_t addr, uint64_t length, int access) {
  auto it = regions.find(key);
  if (it == regions.end() || it->second->mr.pd != pd)
    return false;
  const ibv_mr &mr = it->second->mr;
  uint64_t base = reinterpret_cast<uint64_t>(mr.addr);
  return (it->second->access & access) == access && addr >= base &&
         addr + length <= base + mr.length;
}

} // namespace

extern "C" {

ibv_pd *ibv_alloc_pd(ibv_context *c) {
  auto *pd = new ibv_pd{};
  pd->context = c;
  return pd;
}

int ibv_dealloc_pd(ibv_pd *pd) {
  delete pd;
  return 0;
}

/// A region of `length` bytes at `addr` (both ways of registering; the
/// caller holds the mutex).
static ibv_mr *newRegion(ibv_pd *pd, void *addr, size_t length, int access) {
  auto *m = new FakeMr{};
  m->mr.context = pd->context;
  m->mr.pd = pd;
  m->mr.addr = addr;
  m->mr.length = length;
  m->mr.lkey = m->mr.rkey = nextKey++;
  m->access = access;
  regions[m->mr.lkey] = m;
  return &m->mr;
}

/// FAKE_IBVERBS_HOST_ONLY: no dma-buf, no nvidia-peermem.
static bool hostOnly() {
  const char *env = getenv("FAKE_IBVERBS_HOST_ONLY");
  return env && *env && strcmp(env, "0") != 0;
}

/// Whether every page of [addr, addr + length) lies in mappings of this
/// process that the CPU may read, and write where `write` (what pinning
/// the pages for an HCA needs; see the header).
static bool cpuMapped(const void *addr, size_t length, bool write) {
  const auto page = static_cast<unsigned long>(sysconf(_SC_PAGESIZE));
  unsigned long at = reinterpret_cast<unsigned long>(addr) / page * page;
  const unsigned long end = reinterpret_cast<unsigned long>(addr) + length;
  FILE *maps = fopen("/proc/self/maps", "r");
  if (!maps)
    return false;
  bool covered = length == 0;
  unsigned long start, stop;
  char perms[8];
  // Mappings come in address order; the rest of each line is skipped.
  while (!covered && fscanf(maps, "%lx-%lx %7s%*[^\n]", &start, &stop, perms) == 3) {
    if (stop <= at)
      continue;
    if (start > at || perms[0] != 'r' || (write && perms[1] != 'w'))
      break; // a hole, or a page the CPU may not touch
    at = stop;
    covered = at >= end;
  }
  fclose(maps);
  return covered;
}

// The exported symbol, not the header's macro of the same name.
#undef ibv_reg_mr
ibv_mr *ibv_reg_mr(ibv_pd *pd, void *addr, size_t length, int access) {
  std::lock_guard<std::mutex> lock(mutex);
  const bool write = access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                               IBV_ACCESS_REMOTE_ATOMIC);
  if (refuseRegMr || (hostOnly() && !cpuMapped(addr, length, write))) {
    errno = EFAULT;
    return nullptr;
  }
  return newRegion(pd, addr, length, access);
}

ibv_mr *ibv_reg_dmabuf_mr(ibv_pd *pd, uint64_t, size_t length, uint64_t iova,
                          int fd, int access) {
  std::lock_guard<std::mutex> lock(mutex);
  if (hostOnly()) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  if (fcntl(fd, F_GETFD) == -1) {
    errno = EBADF;
    return nullptr;
  }
  return newRegion(pd, reinterpret_cast<void *>(iova), length, access);
}

void fake_ibverbs_refuse_reg_mr(int on) {
  std::lock_guard<std::mutex> lock(mutex);
  refuseRegMr = on != 0;
}

int ibv_dereg_mr(ibv_mr *mr) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = regions.find(mr->lkey);
  if (it == regions.end())
    return EINVAL;
  delete it->second;
  regions.erase(it);
  return 0;
}

ibv_cq *ibv_create_cq(ibv_context *c, int, void *, ibv_comp_channel *, int) {
  auto *cq = new FakeCq{};
  cq->cq.context = c;
  return &cq->cq;
}

int ibv_destroy_cq(ibv_cq *cq) {
  delete reinterpret_cast<FakeCq *>(cq);
  return 0;
}

ibv_qp *ibv_create_qp(ibv_pd *pd, ibv_qp_init_attr *init) {
  if (init->qp_type != IBV_QPT_RC || !init->send_cq || init->cap.max_send_wr < 1)
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  auto *q = new FakeQp{};
  q->qp.context = pd->context;
  q->qp.pd = pd;
  q->qp.send_cq = init->send_cq;
  q->qp.recv_cq = init->recv_cq;
  q->qp.qp_type = IBV_QPT_RC;
  q->qp.state = IBV_QPS_RESET;
  q->qp.qp_num = nextQpn++;
  q->cap = init->cap;
  q->owner = std::this_thread::get_id();
  queuePairs[q->qp.qp_num] = q;
  allQps.insert(q);
  return &q->qp;
}

int ibv_destroy_qp(ibv_qp *qp) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = queuePairs.find(qp->qp_num);
  if (it != queuePairs.end() && it->second == fakeOf(qp))
    queuePairs.erase(it);
  allQps.erase(fakeOf(qp));
  delete fakeOf(qp);
  return 0;
}

/// The transitions a reliable connection takes, each with the attributes
/// it needs; anything else is EINVAL.
int ibv_modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int mask) {
  std::lock_guard<std::mutex> lock(mutex);
  FakeQp *q = fakeOf(qp);
  auto has = [&](int bits) { return (mask & bits) == bits; };
  if (!(mask & IBV_QP_STATE))
    return EINVAL;
  switch (attr->qp_state) {
  case IBV_QPS_INIT:
    if (qp->state != IBV_QPS_RESET ||
        !has(IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ||
        attr->port_num != 1)
      return EINVAL;
    q->port = attr->port_num;
    break;
  case IBV_QPS_RTR:
    if (qp->state != IBV_QPS_INIT ||
        !has(IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) ||
        attr->ah_attr.port_num != q->port)
      return EINVAL;
    // RoCE needs a global route; InfiniBand a LID.
    if (qp->context == &contexts[1] ? !attr->ah_attr.is_global
                                    : attr->ah_attr.dlid == 0)
      return EINVAL;
    q->destQpn = attr->dest_qp_num;
    break;
  case IBV_QPS_RTS:
    if (qp->state != IBV_QPS_RTR ||
        !has(IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
             IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
      return EINVAL;
    break;
  default:
    return EINVAL;
  }
  qp->state = attr->qp_state;
  return 0;
}

void fake_ibverbs_stall(int on) {
  std::lock_guard<std::mutex> lock(mutex);
  stalled = on != 0;
}

unsigned long long fake_ibverbs_writes() {
  std::lock_guard<std::mutex> lock(mutex);
  return writes;
}

void fake_ibverbs_break_thread(int how) {
  std::lock_guard<std::mutex> lock(mutex);
  for (auto it = queuePairs.begin(); it != queuePairs.end();) {
    FakeQp *q = it->second;
    if (q->owner != std::this_thread::get_id()) {
      ++it;
      continue;
    }
    q->mute = how == 2;
    if (how == 1) { // gone: unanswered from outside, flushed from inside
      q->errored = true;
      q->qp.state = IBV_QPS_ERR;
      it = queuePairs.erase(it);
    } else {
      ++it;
    }
  }
}

} // extern "C"

namespace {

/// A write posted and not yet executed (fake_ibverbs_lag).
struct Pending {
  std::chrono::steady_clock::time_point due;
  FakeQp *qp;
  ibv_send_wr wr;
  ibv_sge sge;
  std::vector<char> inlined;
};
// Never destroyed: the delivery thread waits on them while the process
// exits.
std::deque<Pending> &pending = *new std::deque<Pending>;
std::chrono::microseconds lag{0};
std::condition_variable &pendingCv = *new std::condition_variable;

/// Executes write `wr` of `q` (the caller holds the mutex): checks, lands,
/// completes if signaled or failed.
void execute(FakeQp *q, const ibv_send_wr &wr, const void *inlineData) {
  ibv_qp *qp = &q->qp;
  auto *cq = reinterpret_cast<FakeCq *>(qp->send_cq);
  bool signaled = wr.send_flags & IBV_SEND_SIGNALED;
  ibv_wc_status status = IBV_WC_SUCCESS;
  uint64_t length = wr.num_sge ? wr.sg_list[0].length : 0;
  bool isInline = wr.send_flags & IBV_SEND_INLINE;
  auto peer = queuePairs.find(q->destQpn);
  if (q->errored)
    status = IBV_WC_WR_FLUSH_ERR;
  else if (wr.opcode != IBV_WR_RDMA_WRITE || wr.num_sge > 1 ||
           (isInline && length > q->cap.max_inline_data))
    status = IBV_WC_LOC_QP_OP_ERR;
  else if (length && !isInline &&
           !covers(wr.sg_list[0].lkey, qp->pd, wr.sg_list[0].addr, length, 0))
    status = IBV_WC_LOC_PROT_ERR;
  else if (peer == queuePairs.end() || peer->second->destQpn != qp->qp_num ||
           peer->second->qp.state < IBV_QPS_RTR)
    status = IBV_WC_RETRY_EXC_ERR; // nobody answers
  else if (length && !covers(wr.wr.rdma.rkey, peer->second->qp.pd,
                             wr.wr.rdma.remote_addr, length,
                             IBV_ACCESS_REMOTE_WRITE))
    status = IBV_WC_REM_ACCESS_ERR;
  if (status == IBV_WC_SUCCESS && length) {
    const void *src = inlineData ? inlineData
                                 : reinterpret_cast<const void *>(wr.sg_list[0].addr);
    if (copyBytes(reinterpret_cast<void *>(wr.wr.rdma.remote_addr), src, length))
      ++writes;
    else
      status = IBV_WC_LOC_PROT_ERR;
  }
  if (status != IBV_WC_SUCCESS) {
    q->errored = true;
    qp->state = IBV_QPS_ERR;
    signaled = true; // errors always complete
  }
  if (signaled) {
    ibv_wc wc{};
    wc.wr_id = wr.wr_id;
    wc.status = status;
    wc.opcode = IBV_WC_RDMA_WRITE;
    wc.qp_num = qp->qp_num;
    cq->done.push_back(wc);
  }
}

/// Executes the lagging writes when they are due (a thread of its own).
void deliver() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    pendingCv.wait(lock, [] { return !pending.empty(); });
    auto due = pending.front().due;
    if (std::chrono::steady_clock::now() < due) {
      pendingCv.wait_until(lock, due);
      continue;
    }
    Pending p = std::move(pending.front());
    pending.pop_front();
    // A queue pair destroyed since: its writes go nowhere.
    if (!allQps.count(p.qp))
      continue;
    p.wr.sg_list = p.wr.num_sge ? &p.sge : nullptr;
    execute(p.qp, p.wr, p.inlined.empty() ? nullptr : p.inlined.data());
  }
}

} // namespace

extern "C" {

void fake_ibverbs_lag(int microseconds) {
  static std::once_flag started;
  std::call_once(started, [] { std::thread(deliver).detach(); });
  std::lock_guard<std::mutex> lock(mutex);
  lag = std::chrono::microseconds(microseconds);
}

int fakePostSend(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad) {
  std::lock_guard<std::mutex> lock(mutex);
  FakeQp *q = fakeOf(qp);
  for (; wr; wr = wr->next) {
    if (qp->state != IBV_QPS_RTS && !q->errored) {
      *bad = wr;
      return EINVAL;
    }
    if (q->sendQueue.size() >= q->cap.max_send_wr) {
      *bad = wr;
      return ENOMEM;
    }
    q->sendQueue.push_back({wr->wr_id, (wr->send_flags & IBV_SEND_SIGNALED) != 0});
    if (q->mute)
      continue;
    if (lag.count() == 0 || q->errored) {
      execute(q, *wr, nullptr);
      continue;
    }
    Pending p{std::chrono::steady_clock::now() + lag, q, *wr, {}, {}};
    p.wr.next = nullptr;
    if (wr->num_sge)
      p.sge = wr->sg_list[0];
    if (wr->num_sge && (wr->send_flags & IBV_SEND_INLINE)) {
      const char *data = reinterpret_cast<const char *>(wr->sg_list[0].addr);
      p.inlined.assign(data, data + wr->sg_list[0].length);
    }
    pending.push_back(std::move(p));
    pendingCv.notify_all();
  }
  return 0;
}

int fakePollCq(ibv_cq *cq, int n, ibv_wc *wc) {
  std::lock_guard<std::mutex> lock(mutex);
  if (stalled)
    return 0;
  auto *c = reinterpret_cast<FakeCq *>(cq);
  int got = 0;
  while (got < n && !c->done.empty()) {
    wc[got] = c->done.front();
    c->done.pop_front();
    // The send queue frees every entry up to the completed one.
    if (auto it = queuePairs.find(wc[got].qp_num); it != queuePairs.end()) {
      auto &sq = it->second->sendQueue;
      while (!sq.empty()) {
        bool last = sq.front().wrId == wc[got].wr_id;
        sq.pop_front();
        if (last)
          break;
      }
    }
    ++got;
  }
  return got;
}

} // extern "C"
