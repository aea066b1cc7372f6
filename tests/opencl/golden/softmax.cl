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
inline float16 kd_divu16(float16 x, float s) {
  const float r = 1.0f / s;
  const float16 q = x * r;
  const float16 q1 = fma(fma(-q, (float16)(s), x), (float16)(r), q);
  const float16 ax = fabs(x);
  const int16 zero = x == 0.0f;
  const int16 ok = ((ax >= 0x1p-80f) & (ax <= 0x1p80f)) | zero;
  const float as = fabs(s);
  const int8 ok8 = ok.lo & ok.hi;
  const int4 ok4 = ok8.lo & ok8.hi;
  const int2 ok2 = ok4.lo & ok4.hi;
  if (((ok2.x & ok2.y) < 0) && as >= 0x1p-40f && as <= 0x1p40f) return select(q1, q, zero);
  return (float16)(x.lo / s, x.hi / s);
}
__kernel void softmax_kernel(
    __global uchar* output_ptr_base,
    ulong output_ptr_off,
    const __global uchar* input_ptr_base,
    ulong input_ptr_off,
    int input_row_stride,
    int output_row_stride,
    int n_rows,
    int n_cols)
{
  __global float* restrict const output_ptr = (__global float*)(output_ptr_base + output_ptr_off);
  __global float* restrict const input_ptr = (__global float*)(input_ptr_base + input_ptr_off);
  const int v1 = ((int)get_group_id(0));
  const int v2 = ((int)get_num_groups(0));
  float v3[1024];
  for (int v4 = v1; (v2 > 0 ? v4 < n_rows : v4 > n_rows); v4 += v2) {
    const int v5 = ((int)((uint)v4 * (uint)input_row_stride));
    __global float* const v6 = ((__global float*)input_ptr + v5);
    const int v7 = min(1024, n_cols);
    const int v8 = max(v7, 0);
    const int v9 = ((int)(v8 / 16));
    const int v10 = ((int)((uint)v9 * (uint)16));
    const float16 v11 = ((float16)(NAN));
    const int v12 = ((int)((uint)v10 - (uint)0));
    const int v13 = ((int)(v12 / 64));
    const int v14 = ((int)((uint)v13 * (uint)64));
    const int v15 = ((int)((uint)0 + (uint)v14));
    float16 v16 = v11;
    float16 v17 = v11;
    float16 v18 = v11;
    float16 v19 = v11;
    for (int v20 = 0; v20 < v15; v20 += 64) {
      __global float* const v21 = ((__global float*)v6 + v20);
      const float16 v22 = KD_VLD(float, 16, __global, v21);
      const float16 v23 = fmax(v16, v22);
      const int v24 = ((int)((uint)v20 + (uint)16));
      __global float* const v25 = ((__global float*)v6 + v24);
      const float16 v26 = KD_VLD(float, 16, __global, v25);
      const float16 v27 = fmax(v17, v26);
      const int v28 = ((int)((uint)v20 + (uint)32));
      __global float* const v29 = ((__global float*)v6 + v28);
      const float16 v30 = KD_VLD(float, 16, __global, v29);
      const float16 v31 = fmax(v18, v30);
      const int v32 = ((int)((uint)v20 + (uint)48));
      __global float* const v33 = ((__global float*)v6 + v32);
      const float16 v34 = KD_VLD(float, 16, __global, v33);
      const float16 v35 = fmax(v19, v34);
      const float16 t35_0 = v23;
      const float16 t35_1 = v27;
      const float16 t35_2 = v31;
      const float16 t35_3 = v35;
      v16 = t35_0;
      v17 = t35_1;
      v18 = t35_2;
      v19 = t35_3;
    }
    const float16 v36 = fmax(v16, v17);
    const float16 v37 = fmax(v18, v19);
    const float16 v38 = fmax(v36, v37);
    float16 v39 = v38;
    for (int v40 = v15; v40 < v10; v40 += 16) {
      __global float* const v41 = ((__global float*)v6 + v40);
      const float16 v42 = KD_VLD(float, 16, __global, v41);
      const float16 v43 = fmax(v39, v42);
      v39 = v43;
    }
    const float8 t44 = fmax(v39.lo, v39.hi);
    const float4 t45 = fmax(t44.lo, t44.hi);
    const float2 t46 = fmax(t45.lo, t45.hi);
    const float t47 = fmax(t46.lo, t46.hi);
    float v48 = t47;
    for (int v49 = v10; v49 < 1024; v49 += 1) {
      __global float* const v50 = ((__global float*)v6 + v49);
      const uchar v51 = ((uchar)(v49 < n_cols));
      const float v52 = (v51 ? *v50 : -INFINITY);
      const float v53 = fmax(v48, v52);
      v48 = v53;
    }
    const float16 v54 = ((float16)(v48));
    const int v55 = min(1024, n_cols);
    const int v56 = max(v55, 0);
    const int v57 = ((int)(v56 / 16));
    const int v58 = ((int)((uint)v57 * (uint)16));
    const float16 v59 = ((float16)(-0.0f));
    float16 v60 = v59;
    for (int v61 = 0; v61 < v58; v61 += 16) {
      __global float* const v62 = ((__global float*)v6 + v61);
      const float16 v63 = KD_VLD(float, 16, __global, v62);
      const float16 v64 = (v63 - v54);
      const float16 v65 = exp(v64);
      KD_VST(float, 16, __private, v3 + v61, v65);
      const float16 v66 = (v60 + v65);
      v60 = v66;
    }
    const float8 t67 = (v60.lo + v60.hi);
    const float4 t68 = (t67.lo + t67.hi);
    const float2 t69 = (t68.lo + t68.hi);
    const float t70 = (t69.lo + t69.hi);
    const float v71 = (-0.0f + t70);
    float v72 = v71;
    for (int v73 = v58; v73 < 1024; v73 += 1) {
      __global float* const v74 = ((__global float*)v6 + v73);
      const uchar v75 = ((uchar)(v73 < n_cols));
      const float v76 = (v75 ? *v74 : -INFINITY);
      const float v77 = (v76 - v48);
      const float v78 = exp(v77);
      v3[v73] = v78;
      const float v79 = (v72 + v78);
      v72 = v79;
    }
    const int v80 = ((int)((uint)v4 * (uint)output_row_stride));
    __global float* const v81 = ((__global float*)output_ptr + v80);
    const float16 v82 = ((float16)(v72));
    const int v83 = min(1024, n_cols);
    const int v84 = max(v83, 0);
    const int v85 = ((int)(v84 / 16));
    const int v86 = ((int)((uint)v85 * (uint)16));
    for (int v87 = 0; v87 < v86; v87 += 16) {
      __global float* const v88 = ((__global float*)v81 + v87);
      const float16 v89 = KD_VLD(float, 16, __private, v3 + v87);
      const float16 v90 = kd_divu16(v89, v72);
      KD_VST(float, 16, __global, v88, v90);
    }
    for (int v91 = v86; v91 < 1024; v91 += 1) {
      __global float* const v92 = ((__global float*)v81 + v91);
      const float v93 = v3[v91];
      const float v94 = (v93 / v72);
      const uchar v95 = ((uchar)(v91 < n_cols));
      if (v95) *v92 = v94;
    }
  }
}
