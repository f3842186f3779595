//===- MsclInterfaces.td - Interfaces of the mscl dialect --*- tablegen -*-===//

#ifndef MSCL_INTERFACES_TD
#define MSCL_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Mscl_CommOpInterface : OpInterface<"CommOpInterface"> {
  let cppNamespace = "::mscl";
  let description = [{
    What a thread-block operation does, said once: the primitive actions it
    performs, in the order they take effect (mscl/IR/MsclSemantics.h). A
    fused operation is the sequence of its parts (put_with_signal is a copy
    into the peer, the barrier that makes every thread's part of it the
    signalling thread's history, then a signal), so every consumer that asks
    (the passes' access analysis, the backend's resource collection, ...)
    sees one meaning. Structural operations (`mscl.pipeline`) perform no
    action of their own.
  }];
  let methods = [
    InterfaceMethod<[{
        Appends the operation's primitive actions to `actions`, in order.
      }],
      "void", "getActions",
      (ins "::llvm::SmallVectorImpl<::mscl::Action> &":$actions)>,
    InterfaceMethod<[{
        Replaces every chunk and channel reference the operation holds (the
        ones its actions name) by `fn` of it, for transformations that move
        chunks or rename channels (replication).
      }],
      "void", "mapChunksAndChannels",
      (ins "::llvm::function_ref<::mlir::Attribute(::mlir::Attribute)>":$fn)>,
  ];
}

def Mscl_SyncOpInterface : OpInterface<"SyncOpInterface"> {
  let cppNamespace = "::mscl";
  let description = [{
    A signal, wait or flush: one synchronisation action over a list of
    channels, which passes may extend (mscl-merge-sync merges adjacent ops of
    one kind into one).
  }];
  let methods = [
    InterfaceMethod<"The channels, in order.", "::mlir::ArrayAttr",
      "getChannels", (ins), [{ return $_op.getChannels(); }]>,
    InterfaceMethod<"Replaces the channel list.", "void", "setChannelsAttr",
      (ins "::mlir::ArrayAttr":$channels),
      [{ $_op.setChannelsAttr(channels); }]>,
  ];
}

#endif // MSCL_INTERFACES_TD
