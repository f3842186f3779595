//===- MsclOps.td - Operations of the mscl dialect ---------*- tablegen -*-===//

#ifndef MSCL_OPS_TD
#define MSCL_OPS_TD

include "mscl/IR/MsclAttrs.td"
include "mscl/IR/MsclInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/BuiltinAttributes.td"

def Mscl_ChunkArrayAttr : TypedArrayAttrBase<Mscl_ChunkAttr, "array of chunks">;

//===----------------------------------------------------------------------===//
// Structure: program, buffers, channels, ranks, thread blocks
//===----------------------------------------------------------------------===//

def Mscl_ProgramOp : Mscl_Op<"program", [
    SymbolTable, Symbol, NoTerminator, SingleBlock, IsolatedFromAbove,
    NoRegionArguments]> {
  let summary = "A collective communication algorithm for a fixed rank count";
  let description = [{
    The root of an algorithm: its body declares buffers (`mscl.buffer`) and
    channels (`mscl.channel`, `mscl.switch_channel`) and holds one
    `mscl.rank` per rank. `chunks` is K, the number of chunks that the run-time
    element count is split into; `input_chunks`/`output_chunks` follow from the
    collective. With `inplace`, the collective's input and output share memory
    and only the canonical buffer is declared.

    The verifier checks everything that crosses operations: channel and buffer
    references, chunk bounds, that channel operations run on the channel's
    source rank and local operations touch only the rank's own chunks.

    Example:
    ```mlir
    mscl.program @ring attributes {collective = #mscl.collective<allreduce>,
        ranks = 2 : i64, gpus_per_node = 2 : i64, instances = 1 : i64,
        chunks = 1 : i64, input_chunks = 1 : i64, output_chunks = 1 : i64} {
      mscl.buffer @input input[1]
      mscl.buffer @output output[1]
      ...
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
      Mscl_CollectiveKindAttr:$collective,
      ConfinedAttr<I64Attr, [IntPositive]>:$ranks,
      ConfinedAttr<I64Attr, [IntPositive]>:$gpus_per_node,
      ConfinedAttr<I64Attr, [IntPositive]>:$instances,
      ConfinedAttr<I64Attr, [IntPositive]>:$chunks,
      ConfinedAttr<I64Attr, [IntPositive]>:$input_chunks,
      ConfinedAttr<I64Attr, [IntPositive]>:$output_chunks,
      UnitAttr:$inplace,
      DefaultValuedAttr<I64Attr, "0">:$root);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    mlir::Block &getBodyBlock() { return getBody().front(); }
  }];
}

def Mscl_BufferOp : Mscl_Op<"buffer", [Symbol, HasParent<"ProgramOp">]> {
  let summary = "Declares a buffer present on every rank";
  let description = [{
    `input` and `output` are the collective's user buffers; scratch buffers
    are allocated by the runtime. A `packet` scratch buffer holds LL packets
    (written by puts on LL channels) and is read by spinning on their flags.

    Example: `mscl.buffer @recv scratch[8] packet`
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Mscl_BufferKindAttr:$kind,
      ConfinedAttr<I64Attr, [IntPositive]>:$chunks, UnitAttr:$packet);
  let assemblyFormat =
      "$sym_name $kind `[` $chunks `]` (`packet` $packet^)? attr-dict";
  let hasVerifier = 1;
}

def Mscl_ChannelOp : Mscl_Op<"channel", [Symbol, HasParent<"ProgramOp">]> {
  let summary = "Declares a point-to-point channel from `src` to `dst`";
  let description = [{
    A MemoryChannel (`memory`, protocol LL or HB) or PortChannel (`port`).
    Operations on the channel run on rank `src`. A signal on the channel
    releases a wait on its other end: the channel of the same kind, protocol
    and id from `dst` to `src`. `id` tells apart parallel channels between
    the same ranks.

    Example: `mscl.channel @mem_hb_0_1 memory HB 0 -> 1`
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Mscl_ChannelKindAttr:$kind,
      OptionalAttr<Mscl_ProtocolAttr>:$protocol,
      ConfinedAttr<I64Attr, [IntNonNegative]>:$src,
      ConfinedAttr<I64Attr, [IntNonNegative]>:$dst,
      DefaultValuedAttr<I64Attr, "0">:$id);
  let assemblyFormat = [{
    $sym_name $kind custom<OptionalProtocol>($protocol) $src `->` $dst
    (`id` $id^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Mscl_SwitchChannelOp : Mscl_Op<"switch_channel",
    [Symbol, HasParent<"ProgramOp">]> {
  let summary = "Declares a SwitchChannel (NVLS multimem) over a rank group";
  let description = [{
    A multimem address names the same buffer on every rank of `ranks`;
    `mscl.switch_reduce` and `mscl.switch_broadcast` use it.

    Example: `mscl.switch_channel @switch_0_4 ranks [0, 1, 2, 3]`
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, DenseI64ArrayAttr:$ranks,
      DefaultValuedAttr<I64Attr, "0">:$id);
  let assemblyFormat = "$sym_name `ranks` $ranks (`id` $id^)? attr-dict";
  let hasVerifier = 1;
}

def Mscl_RankOp : Mscl_Op<"rank", [HasParent<"ProgramOp">, NoTerminator,
    SingleBlock, NoRegionArguments]> {
  let summary = "The thread blocks of one rank";
  let description = [{
    Holds the `mscl.threadblock` ops that make up the kernel of rank `rank`.

    Example: `mscl.rank 0 { mscl.threadblock 0 { ... } }`
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$rank);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$rank attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def Mscl_ThreadBlockOp : Mscl_Op<"threadblock", [HasParent<"RankOp">,
    NoTerminator, SingleBlock, NoRegionArguments]> {
  let summary = "The straight-line operations of one thread block";
  let description = [{
    Thread block `id` of the enclosing rank runs these operations in order.
    With `group G`, blocks `id .. id+G-1` form a thread-block group that
    shares every operation, each block taking a slice of its data.

    Example: `mscl.threadblock 1 group 4 { mscl.copy ... }`
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$id,
      DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>, "1">:$group);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$id (`group` $group^)? attr-dict-with-keyword $body";
}

//===----------------------------------------------------------------------===//
// Operations placed on thread blocks
//===----------------------------------------------------------------------===//

class Mscl_TBOp<string mnemonic, list<Trait> traits = []>
    : Mscl_Op<mnemonic, traits # [ParentOneOf<["ThreadBlockOp", "PipelineOp"]>,
                                  DeclareOpInterfaceMethods<Mscl_CommOpInterface>]>;

class Mscl_PutLikeOp<string mnemonic>
    : Mscl_TBOp<mnemonic> {
  let arguments = (ins FlatSymbolRefAttr:$channel, Mscl_ChunkAttr:$dst,
                       Mscl_ChunkAttr:$src);
  let assemblyFormat = "$channel `to` $dst `from` $src attr-dict";
  let hasVerifier = 1;
}

def Mscl_PutOp : Mscl_PutLikeOp<"put"> {
  let summary = "Writes a local chunk into the channel peer's chunk";
  let description = [{
    Starts copying `src` (on the channel's source rank) into `dst` (on its
    destination rank) and returns. On an HB memory channel or a port channel
    the data is visible to the peer only after a later signal lands; on an LL
    channel it is written as flagged packets into a packet buffer.

    Example:
    `mscl.put @mem_hb_0_1 to <rank 1, s[0]> from <rank 0, input[0]>`
  }];
}

def Mscl_PutWithSignalOp : Mscl_PutLikeOp<"put_with_signal"> {
  let summary = "put followed by signal on the same channel";
  let description = [{
    Equivalent to `mscl.put` then `mscl.signal` on the same channel, issued as
    one operation (one FIFO entry on a port channel).

    Example:
    `mscl.put_with_signal @port_0_1 to <rank 1, s[0]> from <rank 0, input[0]>`
  }];
}

def Mscl_PutWithSignalAndFlushOp
    : Mscl_PutLikeOp<"put_with_signal_and_flush"> {
  let summary = "put, signal and flush on the same channel";
  let description = [{
    Equivalent to `mscl.put`, `mscl.signal`, `mscl.flush`: after it the
    source chunk may be overwritten.

    Example: `mscl.put_with_signal_and_flush @port_0_1 to <rank 1, s[0]>
    from <rank 0, input[0]>`
  }];
}

def Mscl_GetOp : Mscl_TBOp<"get"> {
  let summary = "Reads the channel peer's chunk into a local chunk";
  let description = [{
    Copies `src` (on the channel's destination rank) into `dst` (local). The
    caller must know the data is ready (an earlier wait).

    Example: `mscl.get @mem_hb_0_1 to <rank 0, s[1]> from <rank 1, input[0]>`
  }];
  let arguments = (ins FlatSymbolRefAttr:$channel, Mscl_ChunkAttr:$dst,
                       Mscl_ChunkAttr:$src);
  let assemblyFormat = "$channel `to` $dst `from` $src attr-dict";
  let hasVerifier = 1;
}

class Mscl_SyncOp<string mnemonic>
    : Mscl_TBOp<mnemonic, [Mscl_SyncOpInterface]> {
  let arguments = (ins ConfinedAttr<FlatSymbolRefArrayAttr,
                       [ArrayMinCount<1>]>:$channels);
  let assemblyFormat = "$channels attr-dict";
  let hasVerifier = 1;
}

def Mscl_SignalOp : Mscl_SyncOp<"signal"> {
  let summary = "Releases the peer's wait after all earlier puts land";
  let description = [{
    For each channel: once every earlier put on it is visible at the peer,
    increment the semaphore that the other end waits on. Several channels
    are signalled together.

    Example: `mscl.signal [@mem_hb_0_1, @mem_hb_0_2]`
  }];
}

def Mscl_WaitOp : Mscl_SyncOp<"wait"> {
  let summary = "Blocks until the peer's next signal arrives";
  let description = [{
    For each channel: wait for the next signal from the other end (the
    expected semaphore value grows by one with every wait).

    Example: `mscl.wait [@mem_hb_0_1]`
  }];
}

def Mscl_FlushOp : Mscl_SyncOp<"flush"> {
  let summary = "Blocks until earlier puts left their source";
  let description = [{
    For a port channel: wait until the proxy completed every earlier
    transfer, after which their sources may be overwritten. A no-op on
    memory channels.

    Example: `mscl.flush [@port_0_1]`
  }];
}

def Mscl_CopyOp : Mscl_TBOp<"copy"> {
  let summary = "Copies a local chunk to another local chunk";
  let description = [{
    When `src` lies in a packet buffer, its LL packets are read, spinning on
    their flags.

    Example: `mscl.copy to <rank 0, output[1]> from <rank 0, s[1]>`
  }];
  let arguments = (ins Mscl_ChunkAttr:$dst, Mscl_ChunkAttr:$src);
  let assemblyFormat = "`to` $dst `from` $src attr-dict";
  let hasVerifier = 1;
}

def Mscl_ReduceOp : Mscl_TBOp<"reduce"> {
  let summary = "dst = reduction of several local chunks";
  let description = [{
    Combines `srcs` element-wise with the run-time reduction operator and
    stores the result in `dst` (which may be one of the sources).

    Example: `mscl.reduce to <rank 0, output[0]> from
    [<rank 0, input[0]>, <rank 0, s[1]>]`
  }];
  let arguments = (ins Mscl_ChunkAttr:$dst,
      ConfinedAttr<Mscl_ChunkArrayAttr, [ArrayMinCount<2>]>:$srcs);
  let assemblyFormat = "`to` $dst `from` custom<ChunkList>($srcs) attr-dict";
  let hasVerifier = 1;
}

def Mscl_ReadReduceOp : Mscl_TBOp<"read_reduce"> {
  let summary = "dst = local sources + chunks read from peers";
  let description = [{
    Reads `remotes[i]` from the peer of `channels[i]` (memory channels) and
    reduces them together with the local `srcs` into `dst`, reading all
    peers at once.

    Example: `mscl.read_reduce to <rank 0, output[0]> from [<rank 0,
    input[0]>] remote [@mem_hb_0_1 <rank 1, input[0]>]`
  }];
  let arguments = (ins Mscl_ChunkAttr:$dst, Mscl_ChunkArrayAttr:$srcs,
      FlatSymbolRefArrayAttr:$channels, Mscl_ChunkArrayAttr:$remotes);
  let assemblyFormat = [{
    `to` $dst `from` custom<ChunkList>($srcs)
    `remote` custom<ChannelChunkList>($channels, $remotes) attr-dict
  }];
  let hasVerifier = 1;
}

def Mscl_ReducePutOp : Mscl_TBOp<"reduce_put"> {
  let summary = "Reduces local chunks and puts the result to peers";
  let description = [{
    Computes the reduction of `srcs` in registers and writes it to
    `dsts[i]` through `channels[i]`, and also to the local `store` chunk if
    present; the result never makes a round trip through memory. With one
    source it is a put to several peers that loads the source once.

    Example: `mscl.reduce_put [@mem_hb_0_1 <rank 1, output[0]>] from
    [<rank 0, input[0]>, <rank 0, s[1]>] store <rank 0, output[0]>`
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$channels,
      Mscl_ChunkArrayAttr:$dsts,
      ConfinedAttr<Mscl_ChunkArrayAttr, [ArrayMinCount<1>]>:$srcs,
      OptionalAttr<Mscl_ChunkAttr>:$store);
  let assemblyFormat = [{
    custom<ChannelChunkList>($channels, $dsts) `from` custom<ChunkList>($srcs)
    (`store` $store^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Mscl_SwitchReduceOp : Mscl_TBOp<"switch_reduce"> {
  let summary = "dst = reduction of src over every rank of a switch group";
  let description = [{
    `multimem.ld_reduce` on the multimem address of `src`: the switch sums
    the chunk over the group and the result is stored to local `dst`.
    `src` is written with the executing rank; it names the same chunk on
    every rank of the group.

    Example: `mscl.switch_reduce @switch_0_4 to <rank 0, output[0]> from
    <rank 0, input[0]>`
  }];
  let arguments = (ins FlatSymbolRefAttr:$channel, Mscl_ChunkAttr:$dst,
                       Mscl_ChunkAttr:$src);
  let assemblyFormat = "$channel `to` $dst `from` $src attr-dict";
  let hasVerifier = 1;
}

def Mscl_SwitchBroadcastOp : Mscl_TBOp<"switch_broadcast"> {
  let summary = "Stores a local chunk into dst on every rank of a switch group";
  let description = [{
    `multimem.st` of local `src` to the multimem address of `dst`, which is
    written with the executing rank and names that chunk on every group rank.

    Example: `mscl.switch_broadcast @switch_0_4 to <rank 0, output[0]> from
    <rank 0, output[0]>`
  }];
  let arguments = (ins FlatSymbolRefAttr:$channel, Mscl_ChunkAttr:$dst,
                       Mscl_ChunkAttr:$src);
  let assemblyFormat = "$channel `to` $dst `from` $src attr-dict";
  let hasVerifier = 1;
}

def Mscl_BarrierOp : Mscl_TBOp<"barrier"> {
  let summary = "Thread-block barrier";
  let description = [{
    Every thread of the block (or group) reaches this point before any goes
    on, ordering the memory accesses of operations before and after it.

    Example: `mscl.barrier`
  }];
  let assemblyFormat = "attr-dict";
}

def Mscl_PipelineOp : Mscl_TBOp<"pipeline", [NoTerminator, SingleBlock,
    NoRegionArguments]> {
  let summary = "Repeats its body over slices of every chunk";
  let description = [{
    Iteration `t` runs the body on bytes `[t*unit, (t+1)*unit)` of each chunk
    it names; the trip count is computed at run time from the element count.

    Example: `mscl.pipeline unit 1048576 { mscl.put ... }`
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntPositive]>:$unit);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "`unit` $unit attr-dict-with-keyword $body";
}

#endif // MSCL_OPS_TD
