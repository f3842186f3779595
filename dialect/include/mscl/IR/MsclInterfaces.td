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
  ];
}

#endif // MSCL_INTERFACES_TD
