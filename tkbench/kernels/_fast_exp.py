"""exp(x) for compiled loops that LLVM can vectorise (numba has no vector math library here: without Intel's SVML,
``math.exp`` in a loop is one libm call per element, and the hierarchical kernels' loops are bound by it).

Method (the classical one of Cody & Waite, as in most libm implementations): x = k ln 2 + r with k the nearest
integer to x / ln 2 and |r| <= ln(2) / 2, ln 2 split in a high part with trailing zero bits and a low part so that
k ln2_hi is exact; exp(r) by its Taylor polynomial of degree 13 (remainder below 0.35^14 / 14! < 2e-18 relative),
and 2^k built in the exponent bits. k is rounded with the "add 1.5 * 2^52" trick and read back with a bit cast,
so the loop body has no branch and no float-to-int conversion (which AVX2 lacks for 64-bit integers).

Range: exact to a few units in the last place for -708 <= x <= 709; below -708 it returns 0 (the true value is
below 3.3e-308, a subnormal: kernel values that small are 0 for every purpose here); above 709 it is not used
(the kernels' exponents are never positive). Tested against ``numpy.exp`` in tests/test_hierarchical_fast.py.
"""
from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic


@intrinsic
def _float_bits(typingctx, x):
    """The IEEE-754 bits of a float64 as an int64 (an LLVM bit cast: no instruction)."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _bits_float(typingctx, x):
    """The float64 whose IEEE-754 bits are the int64 ``x``."""
    if x != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471803691238  # 0x3FE62E42FEE00000: 32 trailing zero bits, so k * _LN2_HI is exact for |k| < 2^20
_LN2_LO = 1.9082149292705877e-10
_SHIFT = 6755399441055744.0  # 1.5 * 2^52: adding it rounds to an integer held in the low mantissa bits
_SHIFT_BITS = 0x4338000000000000
_UNDERFLOW = -708.0


@njit(fastmath=False, cache=True)
def fast_exp(x):
    """exp(x), branch-free (see the module); 0 below -708."""
    xc = max(x, _UNDERFLOW)
    kd = xc * _LOG2E + _SHIFT
    k = _float_bits(kd) - _SHIFT_BITS
    kd = kd - _SHIFT
    r = (xc - kd * _LN2_HI) - kd * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    scale = _bits_float((k + 1023) << 52)
    return p * scale if x >= _UNDERFLOW else 0.0
