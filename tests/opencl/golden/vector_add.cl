#pragma OPENCL FP_CONTRACT OFF
#ifdef __clang__
#define KD_VLD(T, N, S, p) (*(S const kd_u##T##N*)(p))
#define KD_VST(T, N, S, p, v) (*(S kd_u##T##N*)(p) = (v))
#else
#define KD_VLD(T, N, S, p) vload##N(0, p)
#define KD_VST(T, N, S, p, v) vstore##N(v, 0, p)
#endif
#ifdef __clang__
typedef float16 __attribute__((aligned(4))) kd_ufloat16;
#endif
#if defined(__clang__) && defined(__AVX512F__)
typedef float kd_v16sf __attribute__((vector_size(64)));
typedef int kd_v16si __attribute__((vector_size(64)));
#define KD_LANES16(n) ((ushort)((n) <= 0 ? 0u : (n) >= 16 ? 0xFFFFu : (1u << (n)) - 1u))
#endif
inline float16 kd_ldn_float16_global(__global const float* p, int n, float o) {
#if defined(__clang__) && defined(__AVX512F__)
  return __builtin_convertvector(__builtin_ia32_loadups512_mask((__global const void*)p, __builtin_convertvector((float16)(o), kd_v16sf), KD_LANES16(n)), float16);
#else
  __private float t[16];
  for (int i = 0; i < 16; i++) t[i] = i < n ? p[i] : o;
  return KD_VLD(float, 16, __private, t);
#endif
}
inline void kd_stn_float16_global(__global float* p, int n, float16 v) {
#if defined(__clang__) && defined(__AVX512F__)
  __builtin_ia32_storeups512_mask((__global void*)p, __builtin_convertvector(v, kd_v16sf), KD_LANES16(n));
#else
  __private float t[16];
  KD_VST(float, 16, __private, t, v);
  for (int i = 0; i < min(n, 16); i++) p[i] = t[i];
#endif
}
__kernel void add_kernel(
    const __global uchar* x_ptr_base,
    ulong x_ptr_off,
    const __global uchar* y_ptr_base,
    ulong y_ptr_off,
    __global uchar* output_ptr_base,
    ulong output_ptr_off,
    int n_elements)
{
  __global float* restrict const x_ptr = (__global float*)(x_ptr_base + x_ptr_off);
  __global float* restrict const y_ptr = (__global float*)(y_ptr_base + y_ptr_off);
  __global float* restrict const output_ptr = (__global float*)(output_ptr_base + output_ptr_off);
  const int v1 = ((int)get_group_id(0));
  const int v2 = ((int)((uint)v1 * (uint)1024));
  const int v3 = ((int)((uint)n_elements - (uint)v2));
  const int v4 = min(1024, v3);
  const int v5 = max(v4, 0);
  const int v6 = ((int)(v5 / 16));
  const int v7 = ((int)((uint)v6 * (uint)16));
  for (int v8 = 0; v8 < v7; v8 += 16) {
    const int v9 = ((int)((uint)v2 + (uint)v8));
    __global float* const v10 = ((__global float*)x_ptr + v9);
    const float16 v11 = KD_VLD(float, 16, __global, v10);
    __global float* const v12 = ((__global float*)y_ptr + v9);
    const float16 v13 = KD_VLD(float, 16, __global, v12);
    __global float* const v14 = ((__global float*)output_ptr + v9);
    const float16 v15 = (v11 + v13);
    KD_VST(float, 16, __global, v14, v15);
  }
  for (int v16 = v7; v16 < v5; v16 += 16) {
    const int v17 = ((int)((uint)v5 - (uint)v16));
    const int v18 = ((int)((uint)v2 + (uint)v16));
    __global float* const v19 = ((__global float*)x_ptr + v18);
    const float16 v20 = kd_ldn_float16_global(v19, v17, 0);
    __global float* const v21 = ((__global float*)y_ptr + v18);
    const float16 v22 = kd_ldn_float16_global(v21, v17, 0);
    __global float* const v23 = ((__global float*)output_ptr + v18);
    const float16 v24 = (v20 + v22);
    kd_stn_float16_global(v23, v17, v24);
  }
}
