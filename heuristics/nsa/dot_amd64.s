//go:build !noasm && !gccgo && !safe

#include "textflag.h"

// func dot4(x, a, b, c, d []float64) (sa, sb, sc, sd float64)
//
// Per row r, two packed accumulators hold gonum's f64.DotUnitary sums:
// (s0, s1) += x[i:i+2]·r[i:i+2] and (s2, s3) += x[i+2:i+4]·r[i+2:i+4]
// over blocks of 4; the 1–3 remaining products go to s0 one by one; the
// result is (s1+s3) + (s0+s2), as DotUnitary's end does. X14 and X15
// (Go's fixed zero register) are not used. Products and
// sums are rounded one by one (no fused multiply-add).
TEXT ·dot4(SB), NOSPLIT, $0-152
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ a_base+24(FP), R8
	MOVQ b_base+48(FP), R9
	MOVQ c_base+72(FP), R10
	MOVQ d_base+96(FP), R11
	XORPS X6, X6   // a: s0 s1
	XORPS X7, X7   // a: s2 s3
	XORPS X8, X8 // b
	XORPS X9, X9
	XORPS X10, X10 // c
	XORPS X11, X11
	XORPS X12, X12 // d
	XORPS X13, X13
	XORQ AX, AX    // i
	MOVQ CX, DX
	ANDQ $-4, DX   // end of the blocks of 4
	CMPQ AX, DX
	JGE  tail

loop:
	MOVUPD (SI)(AX*8), X0   // x[i], x[i+1]
	MOVUPD 16(SI)(AX*8), X1 // x[i+2], x[i+3]

	MOVUPD (R8)(AX*8), X2
	MOVUPD 16(R8)(AX*8), X3
	MULPD  X0, X2
	MULPD  X1, X3
	ADDPD  X2, X6
	ADDPD  X3, X7

	MOVUPD (R9)(AX*8), X4
	MOVUPD 16(R9)(AX*8), X5
	MULPD  X0, X4
	MULPD  X1, X5
	ADDPD  X4, X8
	ADDPD  X5, X9

	MOVUPD (R10)(AX*8), X2
	MOVUPD 16(R10)(AX*8), X3
	MULPD  X0, X2
	MULPD  X1, X3
	ADDPD  X2, X10
	ADDPD  X3, X11

	MOVUPD (R11)(AX*8), X4
	MOVUPD 16(R11)(AX*8), X5
	MULPD  X0, X4
	MULPD  X1, X5
	ADDPD  X4, X12
	ADDPD  X5, X13

	ADDQ $4, AX
	CMPQ AX, DX
	JL   loop

tail:
	CMPQ AX, CX
	JGE  end

tailloop:
	MOVSD (SI)(AX*8), X0
	MOVSD (R8)(AX*8), X2
	MULSD X0, X2
	ADDSD X2, X6
	MOVSD (R9)(AX*8), X3
	MULSD X0, X3
	ADDSD X3, X8
	MOVSD (R10)(AX*8), X4
	MULSD X0, X4
	ADDSD X4, X10
	MOVSD (R11)(AX*8), X5
	MULSD X0, X5
	ADDSD X5, X12
	INCQ  AX
	CMPQ  AX, CX
	JL    tailloop

end:
	ADDPD    X7, X6 // (s0+s2, s1+s3)
	MOVAPD   X6, X0
	UNPCKHPD X6, X6 // s1+s3
	ADDSD    X0, X6
	MOVSD    X6, sa+120(FP)

	ADDPD    X9, X8
	MOVAPD   X8, X0
	UNPCKHPD X8, X8
	ADDSD    X0, X8
	MOVSD    X8, sb+128(FP)

	ADDPD    X11, X10
	MOVAPD   X10, X0
	UNPCKHPD X10, X10
	ADDSD    X0, X10
	MOVSD    X10, sc+136(FP)

	ADDPD    X13, X12
	MOVAPD   X12, X0
	UNPCKHPD X12, X12
	ADDSD    X0, X12
	MOVSD    X12, sd+144(FP)
	RET
