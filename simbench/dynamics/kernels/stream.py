"""Non-temporal ("streaming") stores, for outputs too large to stay in cache.

A batch of mass matrices is written once and not read again by the kernel: 10,000 of the
iiwa's take 3.9 MB, more than a core's cache. A plain store first reads each cache line from
memory ("read for ownership"), then writes it back; a streaming store writes the line without
reading it (the CPU combines consecutive stores into whole lines). Measured on the 2-core AMD
EPYC of the bench, copying 10,000 matrices out of a block: 56 -> 26 ns a matrix (7 x 7) and
125 -> 46 ns (9 x 9); the batched mass matrices of the iiwa and the Panda (10,000, a fresh
output each call, interleaved in one process): 5-10 % faster on one thread and on two.

Streaming stores are weakly ordered: :func:`store_fence` (a sequentially consistent fence,
``mfence`` on x86-64) must follow them before another thread reads the output.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["stream_store", "store_fence", "STREAM_BYTES"]

#: outputs at least this large are written with streaming stores (smaller ones may still be in
#: cache when the caller reads them)
STREAM_BYTES = 1 << 20


@intrinsic
def stream_store(typingctx, arr, idx, val):
    """``arr[idx] = val`` with LLVM's ``!nontemporal`` hint (arr 1-D, contiguous; idx
    unsigned, unchecked)."""
    sig = types.void(arr, idx, val)

    def codegen(context, builder, signature, args):
        a, i, v = args
        data = context.make_array(signature.args[0])(context, builder, a).data
        v = context.cast(builder, v, signature.args[2], signature.args[0].dtype)
        store = builder.store(v, builder.gep(data, [i]))
        hint = builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)])
        store.set_metadata("nontemporal", hint)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def store_fence(typingctx):
    """A sequentially consistent fence: the streaming stores before it are visible to every
    thread after it."""
    def codegen(context, builder, signature, args):
        builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.void(), codegen
