//===- IbConnection.cpp - Port channels over IB verbs ---------------------===//

#include "mscclc/runtime/IbConnection.h"

#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/Log.h"
#include "mscclc/runtime/Settings.h"

#include "IbVerbsLib.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <unistd.h>

namespace mscclc::rt {

namespace {

/// Whether [offset, offset + bytes) lies inside `extent` bytes.
bool inside(uint64_t offset, uint64_t bytes, uint64_t extent) {
  return offset <= extent && bytes <= extent - offset;
}

} // namespace

Status ibOptionsFromEnv(IbOptions *out) {
  // The table's defaults are IbOptions' (and NCCL's) defaults; NCCL's
  // variables are the fallbacks of ours.
  IbOptions o = *out;
  int64_t gidIndex = 0, ackTimeout = 0;
  Seconds timeout;
  MSCCLC_TRY(get(setting::IbGidIndex, &gidIndex));
  MSCCLC_TRY(get(setting::IbTimeout, &ackTimeout));
  MSCCLC_TRY(get(setting::TransportTimeout, &timeout));
  MSCCLC_TRY(get(setting::IbRingBytes, &o.ringBytes));
  o.gidIndex = int(gidIndex);
  o.ackTimeout = uint8_t(ackTimeout);
  o.timeoutSeconds = timeout.count();
  *out = o;
  return Status::ok();
}

#if MSCCLC_HAVE_IBVERBS

struct IbDevice::Impl {
  ib::VerbsLib lib;
  IbOptions options;
  std::string port; ///< "mlx5_0:1"
  std::string who;  ///< "IB device mlx5_0:1"
  /// The port's part of every connection's endpoint (lid, port, MTU,
  /// link layer, GID).
  IbEndpoint address;
  ibv_context *context = nullptr;
  ibv_pd *pd = nullptr;

  ~Impl() {
    if (pd)
      lib.deallocPd(pd);
    if (context)
      lib.closeDevice(context);
  }

  Status fail(const std::string &message) const {
    return Status(Code::SystemError, who + ": " + message);
  }
};

/// The region that `mr` registered: [address, address + bytes).
static IbRegion regionOf(const ibv_mr &mr, uint64_t address, uint64_t bytes) {
  IbRegion r;
  r.address = address;
  r.bytes = bytes;
  r.lkey = mr.lkey;
  r.rkey = mr.rkey;
  r.handle = const_cast<ibv_mr *>(&mr);
  return r;
}

struct IbConnection::Impl {
  IbDevice::Impl *device = nullptr; ///< outlives the connection
  const ib::VerbsLib &lib() const { return device->lib; }
  const IbOptions &options() const { return device->options; }
  int peer = -1;
  std::string who; ///< "IB connection to rank 3 (mlx5_0:1)"
  IbEndpoint local;
  ibv_cq *cq = nullptr;
  ibv_qp *qp = nullptr;
  bool connected = false;
  uint64_t queued = 0;       ///< the last write's number
  uint64_t completed = 0;    ///< every write up to this one is done
  uint64_t lastSignaled = 0; ///< the last write that asks for a completion
  IbRemote lastTarget;       ///< where the last write went
  Status error;
  /// The proxy posts while a reset quiesces from the caller's thread.
  mutable std::mutex mutex;

  ~Impl() {
    if (qp)
      lib().destroyQp(qp);
    if (cq)
      lib().destroyCq(cq);
  }

  /// Makes `message` the connection's error (the first one stays).
  Status fail(const std::string &message) {
    if (error.isOk())
      error = Status(Code::SystemError, who + ": " + message);
    return error;
  }

  Status modify(ibv_qp_attr &attr, int mask, const char *state) {
    if (int rc = lib().modifyQp(qp, &attr, mask))
      return fail(fmt::format("moving the queue pair to {}: {}", state,
                              strerror(rc)));
    return Status::ok();
  }

  /// Posts one RDMA write (`sge` null: zero bytes), asking for a
  /// completion when `signaled` or when the send queue needs one.
  Status post(ibv_sge *sge, unsigned extraFlags, const IbRemote &dst,
              uint64_t dstOffset, bool signaled, uint64_t *seq) {
    MSCCLC_TRY(error);
    if (!connected)
      return invalidArgument(who + ": a write before connect()");
    // Unsignaled writes hold their send-queue entries until a later
    // signaled one completes: keep one signaled write in every half.
    const uint64_t half = std::max(1u, options().sendDepth / 2);
    while (queued - completed >= options().sendDepth - 1) {
      if (lastSignaled <= completed) // the half rule below prevents this
        return fail("the send queue is full of unsignaled writes");
      MSCCLC_TRY(waitFor(lastSignaled));
    }
    const uint64_t s = queued + 1;
    signaled = signaled || s - lastSignaled >= half;
    ibv_send_wr wr{};
    wr.wr_id = s;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.sg_list = sge;
    wr.num_sge = sge ? 1 : 0;
    wr.send_flags = extraFlags | (signaled ? IBV_SEND_SIGNALED : 0);
    wr.wr.rdma.remote_addr = dst.address + dstOffset;
    wr.wr.rdma.rkey = dst.rkey;
    ibv_send_wr *bad = nullptr;
    if (int rc = ibv_post_send(qp, &wr, &bad))
      return fail(fmt::format("ibv_post_send: {}", strerror(rc)));
    queued = s;
    if (signaled)
      lastSignaled = s;
    lastTarget = dst;
    *seq = s;
    return Status::ok();
  }

  /// Polls the completion queue until write `seq` completed; `seq` must be
  /// signaled.
  Status waitFor(uint64_t seq) {
    using Clock = std::chrono::steady_clock;
    const auto deadline =
        Clock::now() + std::chrono::duration<double>(options().timeoutSeconds);
    while (completed < seq) {
      int n = 0;
      MSCCLC_TRY(reap(&n));
      if (n == 0 && Clock::now() > deadline)
        return fail(fmt::format("write {} had no completion within {:.0f} s",
                                static_cast<unsigned long long>(seq),
                                options().timeoutSeconds));
    }
    return Status::ok();
  }

  /// Takes the completions that are there, without waiting; `*n` of them.
  Status reap(int *n) {
    MSCCLC_TRY(error);
    ibv_wc wc[16];
    *n = ibv_poll_cq(cq, 16, wc);
    if (*n < 0)
      return fail(fmt::format("ibv_poll_cq failed ({})", *n));
    for (int i = 0; i < *n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS)
        return fail(fmt::format("write {} failed: {} (status {})",
                                static_cast<unsigned long long>(wc[i].wr_id),
                                lib().wcStatusStr(wc[i].status),
                                int(wc[i].status)));
      // Completions come in order: the writes before it are done too.
      completed = std::max<uint64_t>(completed, wc[i].wr_id);
    }
    return Status::ok();
  }
};

IbDevice::IbDevice(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
IbDevice::~IbDevice() = default;

Status IbDevice::open(const IbPort &port, const IbOptions &options,
                      std::unique_ptr<IbDevice> *out) {
  if (options.sendDepth < 2)
    return invalidArgument("IB send queue depth below 2");
  auto impl = std::make_unique<Impl>();
  Impl &d = *impl;
  d.options = options;
  d.port = fmt::format("{}:{}", port.device, port.port);
  d.who = "IB device " + d.port;
  MSCCLC_TRY(ib::loadVerbsLib(ib::verbsLibraryName().c_str(), &d.lib));
  int n = 0;
  ibv_device **devices = d.lib.getDeviceList(&n);
  for (int i = 0; devices && i < n && !d.context; ++i)
    if (port.device == d.lib.getDeviceName(devices[i]))
      d.context = d.lib.openDevice(devices[i]);
  if (devices)
    d.lib.freeDeviceList(devices);
  if (!d.context)
    return d.fail("the device does not open");
  ibv_port_attr pa{};
  if (d.lib.queryPort(d.context, uint8_t(port.port), &pa) != 0)
    return d.fail("ibv_query_port failed");
  if (pa.state != IBV_PORT_ACTIVE)
    return d.fail("the port is not active");
  IbEndpoint &e = d.address;
  e.port = uint8_t(port.port);
  e.lid = pa.lid;
  e.mtu = uint8_t(pa.active_mtu);
  e.ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
  e.gidIndex = uint8_t(options.gidIndex);
  if (e.ethernet) {
    ibv_gid gid{};
    if (d.lib.queryGid(d.context, e.port, options.gidIndex, &gid) != 0)
      return d.fail(fmt::format("no GID at index {} (MSCCLC_IB_GID_INDEX)",
                                options.gidIndex));
    memcpy(e.gid, gid.raw, sizeof(e.gid));
  }
  d.pd = d.lib.allocPd(d.context);
  if (!d.pd)
    return d.fail("ibv_alloc_pd failed");
  out->reset(new IbDevice(std::move(impl)));
  return Status::ok();
}

Status IbDevice::registerHost(void *base, uint64_t bytes, IbRegion *out) {
  Impl &d = *impl_;
  ibv_mr *mr = d.lib.regMr(d.pd, base, bytes,
                           IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (!mr)
    return d.fail(fmt::format("ibv_reg_mr of {} bytes at {} failed: {}",
                              static_cast<unsigned long long>(bytes), base,
                              strerror(errno)));
  *out = regionOf(*mr, reinterpret_cast<uint64_t>(base), bytes);
  return Status::ok();
}

Status IbDevice::registerDevice(void *base, uint64_t bytes,
                                const DmaBufExporter &exportDmaBuf,
                                IbRegion *out, std::string *how) {
  Impl &d = *impl_;
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  const uint64_t address = reinterpret_cast<uint64_t>(base);
  ibv_mr *mr = nullptr;
  std::string dmaBufWhy;
  if (!d.lib.regDmabufMr) {
    dmaBufWhy = "libibverbs has no ibv_reg_dmabuf_mr (rdma-core before v34)";
  } else if (!exportDmaBuf) {
    dmaBufWhy = "no exporter";
  } else {
    // dma-bufs are whole pages.
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    const uint64_t start = address / page * page;
    const uint64_t end = (address + bytes + page - 1) / page * page;
    int fd = -1;
    Status s = exportDmaBuf(reinterpret_cast<void *>(start), end - start, &fd);
    if (!s.isOk()) {
      dmaBufWhy = s.message();
    } else {
      mr = d.lib.regDmabufMr(d.pd, address - start, bytes, address, fd, access);
      if (!mr)
        dmaBufWhy = fmt::format("ibv_reg_dmabuf_mr: {}", strerror(errno));
      close(fd); // the registration holds its own reference
    }
  }
  *how = "dma-buf";
  if (!mr) {
    MSCCLC_LOG(Debug, "{}: no dma-buf registration ({}); trying nvidia-peermem",
               d.who, dmaBufWhy);
    mr = d.lib.regMr(d.pd, base, bytes, access);
    const int regError = errno;
    if (!mr)
      return Status(Code::Unsupported,
                    fmt::format("{}: GPU memory at {} ({} bytes) registers "
                                "neither as a dma-buf ({}) nor through "
                                "nvidia-peermem (ibv_reg_mr: {}); "
                                "MSCCLC_TRANSPORT=tcp stages it through "
                                "pinned host memory",
                                d.who, base,
                                static_cast<unsigned long long>(bytes),
                                dmaBufWhy, strerror(regError)));
    *how = "nvidia-peermem";
  }
  MSCCLC_LOG(Debug, "{}: GPU memory at {} ({} bytes) registered through {}",
             d.who, base, static_cast<unsigned long long>(bytes), *how);
  *out = regionOf(*mr, address, bytes);
  return Status::ok();
}

void IbDevice::deregister(const IbRegion &region) {
  if (region.handle)
    impl_->lib.deregMr(static_cast<ibv_mr *>(region.handle));
}

IbConnection::IbConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
IbConnection::~IbConnection() = default;

Status IbConnection::open(IbDevice &device, int peer,
                          std::unique_ptr<IbConnection> *out) {
  auto impl = std::make_unique<Impl>();
  Impl &c = *impl;
  IbDevice::Impl &d = *device.impl_;
  c.device = &d;
  c.peer = peer;
  c.who = fmt::format("IB connection to rank {} ({})", peer, d.port);
  const unsigned depth = d.options.sendDepth;
  c.cq = d.lib.createCq(d.context, int(depth), nullptr, nullptr, 0);
  if (!c.cq)
    return c.fail("ibv_create_cq failed");
  ibv_qp_init_attr init{};
  init.send_cq = c.cq;
  init.recv_cq = c.cq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = depth;
  init.cap.max_recv_wr = 1;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = 64;
  c.qp = d.lib.createQp(d.pd, &init);
  if (!c.qp)
    return c.fail("ibv_create_qp failed");
  IbEndpoint &e = c.local;
  e = d.address;
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = e.port;
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  MSCCLC_TRY(c.modify(attr,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                          IBV_QP_ACCESS_FLAGS,
                      "INIT"));
  e.qpn = c.qp->qp_num;
  e.psn = std::random_device()() & 0xffffff;
  out->reset(new IbConnection(std::move(impl)));
  return Status::ok();
}

const IbEndpoint &IbConnection::local() const { return impl_->local; }

Status IbConnection::connect(const IbEndpoint &remote) {
  Impl &c = *impl_;
  std::lock_guard<std::mutex> lock(c.mutex);
  MSCCLC_TRY(c.error);
  if (remote.ethernet != c.local.ethernet)
    return c.fail(fmt::format("rank {}'s port is {} and ours {}", c.peer,
                              remote.ethernet ? "RoCE" : "InfiniBand",
                              c.local.ethernet ? "RoCE" : "InfiniBand"));
  ibv_qp_attr rtr{};
  rtr.qp_state = IBV_QPS_RTR;
  rtr.path_mtu = ibv_mtu(std::min(c.local.mtu, remote.mtu));
  rtr.dest_qp_num = remote.qpn;
  rtr.rq_psn = remote.psn;
  rtr.max_dest_rd_atomic = 1;
  rtr.min_rnr_timer = 12;
  rtr.ah_attr.port_num = c.local.port;
  if (remote.ethernet) {
    rtr.ah_attr.is_global = 1;
    memcpy(rtr.ah_attr.grh.dgid.raw, remote.gid, sizeof(remote.gid));
    rtr.ah_attr.grh.sgid_index = c.local.gidIndex;
    rtr.ah_attr.grh.hop_limit = 255;
  } else {
    rtr.ah_attr.dlid = remote.lid;
  }
  MSCCLC_TRY(c.modify(rtr,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                          IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
                      "RTR"));
  ibv_qp_attr rts{};
  rts.qp_state = IBV_QPS_RTS;
  rts.timeout = c.options().ackTimeout;
  rts.retry_cnt = c.options().retryCount;
  rts.rnr_retry = 7;
  rts.sq_psn = c.local.psn;
  rts.max_rd_atomic = 1;
  MSCCLC_TRY(c.modify(rts,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                          IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                          IBV_QP_MAX_QP_RD_ATOMIC,
                      "RTS"));
  c.connected = true;
  return Status::ok();
}

Status IbConnection::write(const IbRegion &src, uint64_t srcOffset,
                           const IbRemote &dst, uint64_t dstOffset,
                           uint64_t bytes, uint64_t *seq) {
  Impl &c = *impl_;
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!inside(srcOffset, bytes, src.bytes) || !inside(dstOffset, bytes, dst.bytes))
    return invalidArgument(fmt::format(
        "{}: a write of {} bytes from offset {} of a {}-byte region to "
        "offset {} of a {}-byte one",
        c.who, static_cast<unsigned long long>(bytes),
        static_cast<unsigned long long>(srcOffset),
        static_cast<unsigned long long>(src.bytes),
        static_cast<unsigned long long>(dstOffset),
        static_cast<unsigned long long>(dst.bytes)));
  const uint64_t most = std::max<uint64_t>(1, c.options().maxMessageBytes);
  uint64_t done = 0;
  do {
    const uint64_t part = std::min(most, bytes - done);
    ibv_sge sge{};
    sge.addr = src.address + srcOffset + done;
    sge.length = uint32_t(part);
    sge.lkey = src.lkey;
    MSCCLC_TRY(c.post(part ? &sge : nullptr, 0, dst, dstOffset + done, false, seq));
    done += part;
  } while (done < bytes);
  return Status::ok();
}

Status IbConnection::writeInline(const void *data, uint32_t bytes,
                                 const IbRemote &dst, uint64_t *seq) {
  Impl &c = *impl_;
  std::lock_guard<std::mutex> lock(c.mutex);
  if (bytes > 8 || bytes > dst.bytes)
    return invalidArgument(fmt::format(
        "{}: an inline write of {} bytes into a {}-byte region", c.who, bytes,
        static_cast<unsigned long long>(dst.bytes)));
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uint64_t>(data);
  sge.length = bytes;
  return c.post(&sge, IBV_SEND_INLINE, dst, 0, false, seq);
}

uint64_t IbConnection::lastQueued() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->queued;
}

Status IbConnection::wait(uint64_t seq) {
  Impl &c = *impl_;
  std::lock_guard<std::mutex> lock(c.mutex);
  MSCCLC_TRY(c.error);
  if (seq <= c.completed)
    return Status::ok();
  if (seq > c.queued)
    return invalidArgument(fmt::format("{}: waiting for write {} of {}", c.who,
                                       static_cast<unsigned long long>(seq),
                                       static_cast<unsigned long long>(c.queued)));
  if (seq > c.lastSignaled) {
    // No completion would name it: a signaled empty write after it does.
    uint64_t marker = 0;
    MSCCLC_TRY(c.post(nullptr, 0, c.lastTarget, 0, true, &marker));
    seq = marker;
  }
  return c.waitFor(seq);
}

Status IbConnection::error() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->error;
}

Status IbConnection::progress() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  int n = 0;
  return impl_->reap(&n);
}
int IbConnection::peer() const { return impl_->peer; }

#else // !MSCCLC_HAVE_IBVERBS

struct IbDevice::Impl {};
struct IbConnection::Impl {};

IbDevice::IbDevice(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
IbDevice::~IbDevice() = default;
Status IbDevice::open(const IbPort &, const IbOptions &,
                      std::unique_ptr<IbDevice> *) {
  return unsupported("this mscclc was built without rdma-core's headers "
                     "(libibverbs-dev)");
}
// Never reached: no IbDevice exists without open(), nor an IbConnection.
Status IbDevice::registerHost(void *, uint64_t, IbRegion *) {
  return unsupported("no IB verbs");
}
Status IbDevice::registerDevice(void *, uint64_t, const DmaBufExporter &,
                                IbRegion *, std::string *) {
  return unsupported("no IB verbs");
}
void IbDevice::deregister(const IbRegion &) {}

IbConnection::IbConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
IbConnection::~IbConnection() = default;

Status IbConnection::open(IbDevice &, int, std::unique_ptr<IbConnection> *) {
  return unsupported("no IB verbs");
}
const IbEndpoint &IbConnection::local() const {
  static IbEndpoint none;
  return none;
}
Status IbConnection::connect(const IbEndpoint &) { return unsupported("no IB verbs"); }
Status IbConnection::write(const IbRegion &, uint64_t, const IbRemote &, uint64_t,
                           uint64_t, uint64_t *) {
  return unsupported("no IB verbs");
}
Status IbConnection::writeInline(const void *, uint32_t, const IbRemote &,
                                 uint64_t *) {
  return unsupported("no IB verbs");
}
uint64_t IbConnection::lastQueued() const { return 0; }
Status IbConnection::wait(uint64_t) { return unsupported("no IB verbs"); }
Status IbConnection::error() const { return unsupported("no IB verbs"); }
Status IbConnection::progress() { return unsupported("no IB verbs"); }
int IbConnection::peer() const { return -1; }

#endif // MSCCLC_HAVE_IBVERBS

namespace {

/// A port channel over an IbConnection (IbConnection.h).
class IbChannel final : public Transport {
public:
  IbChannel(IbConnection *connection, const IbChannelSpec &spec)
      : connection_(connection), spec_(spec),
        counter_(spec.counter ? spec.counter : &ownCounter_) {}

  TransportKind kind() const override { return TransportKind::Ib; }

  Status put(uint32_t srcBuffer, uint64_t srcOffset, uint32_t dstBuffer,
             uint64_t dstOffset, uint64_t size) override {
    PutBuffer src[3], dst[3];
    for (int b = 0; b < 3; ++b) {
      src[b] = {spec_.src[b].handle != nullptr, spec_.src[b].bytes};
      dst[b] = {spec_.dst[b].address != 0, spec_.dst[b].bytes};
    }
    MSCCLC_TRY(checkPut("ib port channel", spec_.planIndex, src, dst, srcBuffer,
                        srcOffset, dstBuffer, dstOffset, size));
    if (size == 0)
      return Status::ok();
    uint64_t seq = 0;
    return connection_->write(spec_.src[srcBuffer], srcOffset,
                              spec_.dst[dstBuffer], dstOffset, size, &seq);
  }

  Status signal() override {
    if (spec_.semaphore.bytes < sizeof(uint64_t))
      return invalidArgument(fmt::format(
          "ib port channel {} signals, but the peer has no reverse channel",
          spec_.planIndex));
    // Inline: the value is copied into the request before this returns.
    uint64_t value = ++*counter_;
    uint64_t seq = 0;
    return connection_->writeInline(&value, sizeof(value), spec_.semaphore, &seq);
  }

  Status flush() override {
    // Every write of the connection, this channel's among them.
    uint64_t last = connection_->lastQueued();
    return last ? connection_->wait(last) : connection_->error();
  }

  Status asyncError() override { return connection_->error(); }

private:
  IbConnection *connection_;
  IbChannelSpec spec_;
  uint64_t ownCounter_ = 0;
  uint64_t *counter_;
};

} // namespace

Status makeIbChannel(IbConnection *connection, const IbChannelSpec &spec,
                     std::unique_ptr<Transport> *out) {
  if (!connection)
    return invalidArgument("an IB port channel needs a connection");
  *out = std::make_unique<IbChannel>(connection, spec);
  return Status::ok();
}

Status IbNetwork::connect(Bootstrap &bootstrap, const std::vector<int> &peers,
                          const IbPort &port, const IbOptions &options,
                          std::unique_ptr<IbNetwork> *out) {
  const int rank = bootstrap.rank(), n = bootstrap.nranks();
  auto net = std::unique_ptr<IbNetwork>(new IbNetwork());
  Status mine = peers.empty() ? Status::ok()
                              : IbDevice::open(port, options, &net->device_);
  for (int p : peers) {
    if (!mine.isOk())
      break;
    if (p < 0 || p >= n || p == rank) {
      mine = invalidArgument(
          fmt::format("rank {}: {} is not a peer among {} ranks", rank, p, n));
      break;
    }
    std::unique_ptr<IbConnection> c;
    mine = IbConnection::open(*net->device_, p, &c);
    if (!mine.isOk())
      break;
    net->connections_[p] = std::move(c);
  }
  if (!mine.isOk())
    net->connections_.clear();
  // Row r: rank r's endpoint for each peer; qpn 0 (never a queue pair's
  // number) where it has none.
  std::vector<IbEndpoint> table(size_t(n) * size_t(n));
  for (auto &[p, c] : net->connections_)
    table[size_t(rank) * size_t(n) + size_t(p)] = c->local();
  MSCCLC_TRY(bootstrap.allGather(table.data(), size_t(n) * sizeof(IbEndpoint)));
  for (auto &[p, c] : net->connections_) {
    if (!mine.isOk())
      break;
    const IbEndpoint &remote = table[size_t(p) * size_t(n) + size_t(rank)];
    mine = remote.qpn == 0
               ? Status(Code::SystemError,
                        fmt::format("rank {} opened no IB connection to rank "
                                    "{} (its own error says why)",
                                    p, rank))
               : c->connect(remote);
  }
  // Also the barrier: no write leaves before every queue pair is ready.
  MSCCLC_TRY(agreeOnSetUp(bootstrap, mine, "IB connections"));
  *out = std::move(net);
  return Status::ok();
}

Status agreeOnSetUp(Bootstrap &bootstrap, const Status &mine,
                    const char *what) {
  const size_t n = size_t(bootstrap.nranks());
  std::vector<int32_t> failed(n, 0);
  failed[size_t(bootstrap.rank())] = !mine.isOk();
  MSCCLC_TRY(bootstrap.allGather(failed.data(), sizeof(int32_t)));
  MSCCLC_TRY(mine);
  for (size_t r = 0; r < n; ++r)
    if (failed[r])
      return systemError(fmt::format(
          "rank {} could not set up its {} (its own error says why)", r, what));
  return Status::ok();
}

IbConnection *IbNetwork::connection(int peer) const {
  auto it = connections_.find(peer);
  return it == connections_.end() ? nullptr : it->second.get();
}

std::vector<int> IbNetwork::peers() const {
  std::vector<int> out;
  for (const auto &entry : connections_)
    out.push_back(entry.first);
  return out;
}

IbNetwork::~IbNetwork() {
  // Executors give their registrations back before the network goes.
  for (auto &entry : byAllocation_)
    device_->deregister(entry.second.region);
}

Status IbNetwork::acquire(void *base, uint64_t bytes, uint64_t id,
                          const DmaBufExporter &exportDmaBuf, IbRegion *out) {
  if (!device_)
    return invalidArgument("registering memory on an IB network without peers");
  std::lock_guard<std::mutex> lock(registryMutex_);
  const auto key = std::make_pair(reinterpret_cast<uint64_t>(base), id);
  auto it = byAllocation_.find(key);
  if (it != byAllocation_.end() && it->second.region.bytes != bytes)
    return internalError(fmt::format(
        "GPU allocation {} at {} is registered with {} bytes and asked for "
        "with {}",
        static_cast<unsigned long long>(id), base,
        static_cast<unsigned long long>(it->second.region.bytes),
        static_cast<unsigned long long>(bytes)));
  if (it == byAllocation_.end()) {
    Registration r;
    std::string how;
    MSCCLC_TRY(device_->registerDevice(base, bytes, exportDmaBuf, &r.region, &how));
    it = byAllocation_.emplace(key, r).first;
  }
  ++it->second.refs;
  *out = it->second.region;
  return Status::ok();
}

void IbNetwork::release(const IbRegion &region) {
  if (!region.handle)
    return;
  std::lock_guard<std::mutex> lock(registryMutex_);
  for (auto it = byAllocation_.begin(); it != byAllocation_.end(); ++it) {
    if (it->second.region.handle != region.handle)
      continue;
    if (--it->second.refs == 0) {
      device_->deregister(it->second.region);
      byAllocation_.erase(it);
    }
    return;
  }
}

size_t IbNetwork::registrations() const {
  std::lock_guard<std::mutex> lock(registryMutex_);
  return byAllocation_.size();
}

Status IbNetwork::exchange(Bootstrap &bootstrap, const std::vector<IbRegion> &mine,
                           std::vector<std::vector<IbRemote>> *out) {
  const size_t n = size_t(bootstrap.nranks()), k = mine.size();
  // The wire format: fixed size, no pointers of this process.
  struct Entry {
    uint64_t address, bytes;
    uint32_t rkey, reserved;
  };
  static_assert(sizeof(Entry) == 24, "a wire format");
  std::vector<Entry> table(n * k);
  for (size_t i = 0; i < k; ++i)
    table[size_t(bootstrap.rank()) * k + i] = {mine[i].address, mine[i].bytes,
                                               mine[i].rkey, 0};
  if (k > 0)
    MSCCLC_TRY(bootstrap.allGather(table.data(), k * sizeof(Entry)));
  out->assign(n, std::vector<IbRemote>(k));
  for (size_t r = 0; r < n; ++r)
    for (size_t i = 0; i < k; ++i) {
      const Entry &e = table[r * k + i];
      (*out)[r][i] = {e.address, e.bytes, e.rkey};
    }
  return Status::ok();
}

Status IbNetwork::quiesce() {
  for (auto &[peer, c] : connections_) {
    const uint64_t last = c->lastQueued();
    MSCCLC_TRY(last ? c->wait(last) : c->error());
  }
  return Status::ok();
}

IbReadiness findIbReadiness(const IbProbe &probe, const IbOptions &options,
                            void *memory, uint64_t bytes,
                            const DmaBufExporter &exportDmaBuf) {
  IbReadiness r;
  if (probe.ports.empty()) {
    r.detail = probe.why;
    return r;
  }
  const IbPort &port = probe.ports.front();
  std::unique_ptr<IbDevice> device;
  Status s = IbDevice::open(port, options, &device);
  if (!s.isOk()) {
    r.detail = s.message();
    return r;
  }
  r.hasPort = true;
  r.port = port;
  IbRegion region;
  std::string how;
  s = device->registerDevice(memory, bytes, exportDmaBuf, &region, &how);
  if (!s.isOk()) {
    r.detail = s.message();
    return r;
  }
  device->deregister(region);
  r.ready = true;
  r.detail = fmt::format("{}, GPU memory through {}", describePorts({port}), how);
  return r;
}

} // namespace mscclc::rt
