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
inline void kd_stn_float16_private(__private float* p, int n, float16 v) {
#if defined(__clang__) && defined(__AVX512F__)
  __builtin_ia32_storeups512_mask((__private void*)p, __builtin_convertvector(v, kd_v16sf), KD_LANES16(n));
#else
  __private float t[16];
  KD_VST(float, 16, __private, t, v);
  for (int i = 0; i < min(n, 16); i++) p[i] = t[i];
#endif
}
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
inline float16 kd_ldn_float16_private(__private const float* p, int n, float o) {
#if defined(__clang__) && defined(__AVX512F__)
  return __builtin_convertvector(__builtin_ia32_loadups512_mask((__private const void*)p, __builtin_convertvector((float16)(o), kd_v16sf), KD_LANES16(n)), float16);
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
    float16 v44 = v39;
    for (int v45 = v10; v45 < v8; v45 += 16) {
      const int v46 = ((int)((uint)v8 - (uint)v45));
      __global float* const v47 = ((__global float*)v6 + v45);
      const float16 v48 = kd_ldn_float16_global(v47, v46, 0);
      const float16 v49 = fmax(v44, v48);
      const int16 v50 = ((int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
      const int16 v51 = ((int16)(v46));
      const int16 v52 = (v50 < v51);
      const float16 v53 = select(v44, v49, v52);
      v44 = v53;
    }
    const float8 t54 = fmax(v44.lo, v44.hi);
    const float4 t55 = fmax(t54.lo, t54.hi);
    const float2 t56 = fmax(t55.lo, t55.hi);
    const float t57 = fmax(t56.lo, t56.hi);
    const float16 v58 = ((float16)(-INFINITY));
    const int v59 = max(1024, v8);
    const int v60 = ((int)((uint)v59 - (uint)v8));
    const int v61 = ((int)(v60 / 16));
    const int v62 = ((int)((uint)v61 * (uint)16));
    const int v63 = ((int)((uint)v8 + (uint)v62));
    const float16 v64 = ((float16)(t57));
    const int v65 = ((int)((uint)v63 - (uint)v8));
    const int v66 = ((int)(v65 / 64));
    const int v67 = ((int)((uint)v66 * (uint)64));
    const int v68 = ((int)((uint)v8 + (uint)v67));
    float16 v69 = v64;
    float16 v70 = v64;
    float16 v71 = v64;
    float16 v72 = v64;
    for (int v73 = v8; v73 < v68; v73 += 64) {
      const float16 v74 = fmax(v69, v58);
      const int v75 = ((int)((uint)v73 + (uint)16));
      const float16 v76 = fmax(v70, v58);
      const int v77 = ((int)((uint)v73 + (uint)32));
      const float16 v78 = fmax(v71, v58);
      const int v79 = ((int)((uint)v73 + (uint)48));
      const float16 v80 = fmax(v72, v58);
      const float16 t80_0 = v74;
      const float16 t80_1 = v76;
      const float16 t80_2 = v78;
      const float16 t80_3 = v80;
      v69 = t80_0;
      v70 = t80_1;
      v71 = t80_2;
      v72 = t80_3;
    }
    const float16 v81 = fmax(v69, v70);
    const float16 v82 = fmax(v71, v72);
    const float16 v83 = fmax(v81, v82);
    float16 v84 = v83;
    for (int v85 = v68; v85 < v63; v85 += 16) {
      const float16 v86 = fmax(v84, v58);
      v84 = v86;
    }
    float16 v87 = v84;
    for (int v88 = v63; v88 < v59; v88 += 16) {
      const int v89 = ((int)((uint)v59 - (uint)v88));
      const float16 v90 = fmax(v87, v58);
      const int16 v91 = ((int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
      const int16 v92 = ((int16)(v89));
      const int16 v93 = (v91 < v92);
      const float16 v94 = select(v87, v90, v93);
      v87 = v94;
    }
    const float8 t95 = fmax(v87.lo, v87.hi);
    const float4 t96 = fmax(t95.lo, t95.hi);
    const float2 t97 = fmax(t96.lo, t96.hi);
    const float t98 = fmax(t97.lo, t97.hi);
    const float16 v99 = ((float16)(t98));
    const int v100 = min(1024, n_cols);
    const int v101 = max(v100, 0);
    const int v102 = ((int)(v101 / 16));
    const int v103 = ((int)((uint)v102 * (uint)16));
    const float16 v104 = ((float16)(-0.0f));
    float16 v105 = v104;
    for (int v106 = 0; v106 < v103; v106 += 16) {
      __global float* const v107 = ((__global float*)v6 + v106);
      const float16 v108 = KD_VLD(float, 16, __global, v107);
      const float16 v109 = (v108 - v99);
      const float16 v110 = exp(v109);
      KD_VST(float, 16, __private, v3 + v106, v110);
      const float16 v111 = (v105 + v110);
      v105 = v111;
    }
    float16 v112 = v105;
    for (int v113 = v103; v113 < v101; v113 += 16) {
      const int v114 = ((int)((uint)v101 - (uint)v113));
      __global float* const v115 = ((__global float*)v6 + v113);
      const float16 v116 = kd_ldn_float16_global(v115, v114, 0);
      const float16 v117 = (v116 - v99);
      const float16 v118 = exp(v117);
      kd_stn_float16_private(v3 + v113, v114, v118);
      const float16 v119 = (v112 + v118);
      const int16 v120 = ((int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
      const int16 v121 = ((int16)(v114));
      const int16 v122 = (v120 < v121);
      const float16 v123 = select(v112, v119, v122);
      v112 = v123;
    }
    const float8 t124 = (v112.lo + v112.hi);
    const float4 t125 = (t124.lo + t124.hi);
    const float2 t126 = (t125.lo + t125.hi);
    const float t127 = (t126.lo + t126.hi);
    const float v128 = (-0.0f + t127);
    const float16 v129 = ((float16)(-INFINITY));
    const float16 v130 = ((float16)(t98));
    const int v131 = max(1024, v101);
    const int v132 = ((int)((uint)v131 - (uint)v101));
    const int v133 = ((int)(v132 / 16));
    const int v134 = ((int)((uint)v133 * (uint)16));
    const int v135 = ((int)((uint)v101 + (uint)v134));
    const float16 v136 = ((float16)(-0.0f));
    float16 v137 = v136;
    for (int v138 = v101; v138 < v135; v138 += 16) {
      const float16 v139 = (v129 - v130);
      const float16 v140 = exp(v139);
      KD_VST(float, 16, __private, v3 + v138, v140);
      const float16 v141 = (v137 + v140);
      v137 = v141;
    }
    float16 v142 = v137;
    for (int v143 = v135; v143 < v131; v143 += 16) {
      const int v144 = ((int)((uint)v131 - (uint)v143));
      const float16 v145 = (v129 - v130);
      const float16 v146 = exp(v145);
      kd_stn_float16_private(v3 + v143, v144, v146);
      const float16 v147 = (v142 + v146);
      const int16 v148 = ((int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
      const int16 v149 = ((int16)(v144));
      const int16 v150 = (v148 < v149);
      const float16 v151 = select(v142, v147, v150);
      v142 = v151;
    }
    const float8 t152 = (v142.lo + v142.hi);
    const float4 t153 = (t152.lo + t152.hi);
    const float2 t154 = (t153.lo + t153.hi);
    const float t155 = (t154.lo + t154.hi);
    const float v156 = (v128 + t155);
    const int v157 = ((int)((uint)v4 * (uint)output_row_stride));
    __global float* const v158 = ((__global float*)output_ptr + v157);
    const float16 v159 = ((float16)(v156));
    const int v160 = min(1024, n_cols);
    const int v161 = max(v160, 0);
    const int v162 = ((int)(v161 / 16));
    const int v163 = ((int)((uint)v162 * (uint)16));
    for (int v164 = 0; v164 < v163; v164 += 16) {
      __global float* const v165 = ((__global float*)v158 + v164);
      const float16 v166 = KD_VLD(float, 16, __private, v3 + v164);
      const float16 v167 = kd_divu16(v166, v156);
      KD_VST(float, 16, __global, v165, v167);
    }
    for (int v168 = v163; v168 < v161; v168 += 16) {
      const int v169 = ((int)((uint)v161 - (uint)v168));
      __global float* const v170 = ((__global float*)v158 + v168);
      const float16 v171 = kd_ldn_float16_private(v3 + v168, v169, 0);
      const float16 v172 = kd_divu16(v171, v156);
      kd_stn_float16_global(v170, v169, v172);
    }
  }
}
