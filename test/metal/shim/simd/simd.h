// Stand-in for Metal's <simd/simd.h>: the MSL mlcc emits uses nothing of it.
#pragma once
