//===- MsclBase.td - The mscl dialect definition -----------*- tablegen -*-===//

#ifndef MSCL_BASE_TD
#define MSCL_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Mscl_Dialect : Dialect {
  let name = "mscl";
  let cppNamespace = "::mscl";
  let summary = "Collective communication algorithms, per rank and thread block";
  let description = [{
    The `mscl` dialect holds a collective communication algorithm after
    meta-evaluation: an `mscl.program` declares buffers and channels, and for
    every rank and thread block lists the one-sided operations it runs, in
    order. Chunks (slices of a buffer on a rank) are attributes, so analyses
    can reason exactly about which data an operation touches. Sizes are
    symbolic: chunk `j` of a user buffer covers elements
    `[floor(j*count/K), floor((j+1)*count/K))`, where `count` is the run-time
    element count and `K` the program's `chunks`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Mscl_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mscl_Dialect, mnemonic, traits>;

#endif // MSCL_BASE_TD
