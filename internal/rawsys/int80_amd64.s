//go:build linux && amd64

#include "textflag.h"

// func Int80(nr, a1, a2, a3 uintptr) int32
TEXT ·Int80(SB), NOSPLIT, $0-36
	MOVQ nr+0(FP), AX
	MOVQ a1+8(FP), BX
	MOVQ a2+16(FP), CX
	MOVQ a3+24(FP), DX
	INT  $0x80
	MOVL AX, ret+32(FP)
	RET
