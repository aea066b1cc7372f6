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
    for (int v49 = v10; v49 < v8; v49 += 1) {
      __global float* const v50 = ((__global float*)v6 + v49);
      const uchar v51 = ((uchar)(v49 < n_cols));
      const float v52 = (v51 ? *v50 : -INFINITY);
      const float v53 = fmax(v48, v52);
      v48 = v53;
    }
    const float16 v54 = ((float16)(-INFINITY));
    const int v55 = max(1024, v8);
    const int v56 = ((int)((uint)v55 - (uint)v8));
    const int v57 = ((int)(v56 / 16));
    const int v58 = ((int)((uint)v57 * (uint)16));
    const int v59 = ((int)((uint)v8 + (uint)v58));
    const float16 v60 = ((float16)(v48));
    const int v61 = ((int)((uint)v59 - (uint)v8));
    const int v62 = ((int)(v61 / 64));
    const int v63 = ((int)((uint)v62 * (uint)64));
    const int v64 = ((int)((uint)v8 + (uint)v63));
    float16 v65 = v60;
    float16 v66 = v60;
    float16 v67 = v60;
    float16 v68 = v60;
    for (int v69 = v8; v69 < v64; v69 += 64) {
      const float16 v70 = fmax(v65, v54);
      const int v71 = ((int)((uint)v69 + (uint)16));
      const float16 v72 = fmax(v66, v54);
      const int v73 = ((int)((uint)v69 + (uint)32));
      const float16 v74 = fmax(v67, v54);
      const int v75 = ((int)((uint)v69 + (uint)48));
      const float16 v76 = fmax(v68, v54);
      const float16 t76_0 = v70;
      const float16 t76_1 = v72;
      const float16 t76_2 = v74;
      const float16 t76_3 = v76;
      v65 = t76_0;
      v66 = t76_1;
      v67 = t76_2;
      v68 = t76_3;
    }
    const float16 v77 = fmax(v65, v66);
    const float16 v78 = fmax(v67, v68);
    const float16 v79 = fmax(v77, v78);
    float16 v80 = v79;
    for (int v81 = v64; v81 < v59; v81 += 16) {
      const float16 v82 = fmax(v80, v54);
      v80 = v82;
    }
    const float8 t83 = fmax(v80.lo, v80.hi);
    const float4 t84 = fmax(t83.lo, t83.hi);
    const float2 t85 = fmax(t84.lo, t84.hi);
    const float t86 = fmax(t85.lo, t85.hi);
    float v87 = t86;
    for (int v88 = v59; v88 < 1024; v88 += 1) {
      __global float* const v89 = ((__global float*)v6 + v88);
      const uchar v90 = ((uchar)(v88 < n_cols));
      const float v91 = (v90 ? *v89 : -INFINITY);
      const float v92 = fmax(v87, v91);
      v87 = v92;
    }
    const float16 v93 = ((float16)(v87));
    const int v94 = min(1024, n_cols);
    const int v95 = max(v94, 0);
    const int v96 = ((int)(v95 / 16));
    const int v97 = ((int)((uint)v96 * (uint)16));
    const float16 v98 = ((float16)(-0.0f));
    float16 v99 = v98;
    for (int v100 = 0; v100 < v97; v100 += 16) {
      __global float* const v101 = ((__global float*)v6 + v100);
      const float16 v102 = KD_VLD(float, 16, __global, v101);
      const float16 v103 = (v102 - v93);
      const float16 v104 = exp(v103);
      KD_VST(float, 16, __private, v3 + v100, v104);
      const float16 v105 = (v99 + v104);
      v99 = v105;
    }
    const float8 t106 = (v99.lo + v99.hi);
    const float4 t107 = (t106.lo + t106.hi);
    const float2 t108 = (t107.lo + t107.hi);
    const float t109 = (t108.lo + t108.hi);
    const float v110 = (-0.0f + t109);
    float v111 = v110;
    for (int v112 = v97; v112 < v95; v112 += 1) {
      __global float* const v113 = ((__global float*)v6 + v112);
      const uchar v114 = ((uchar)(v112 < n_cols));
      const float v115 = (v114 ? *v113 : -INFINITY);
      const float v116 = (v115 - v87);
      const float v117 = exp(v116);
      v3[v112] = v117;
      const float v118 = (v111 + v117);
      v111 = v118;
    }
    const float16 v119 = ((float16)(-INFINITY));
    const float16 v120 = ((float16)(v87));
    const int v121 = max(1024, v95);
    const int v122 = ((int)((uint)v121 - (uint)v95));
    const int v123 = ((int)(v122 / 16));
    const int v124 = ((int)((uint)v123 * (uint)16));
    const int v125 = ((int)((uint)v95 + (uint)v124));
    const float16 v126 = ((float16)(-0.0f));
    float16 v127 = v126;
    for (int v128 = v95; v128 < v125; v128 += 16) {
      const float16 v129 = (v119 - v120);
      const float16 v130 = exp(v129);
      KD_VST(float, 16, __private, v3 + v128, v130);
      const float16 v131 = (v127 + v130);
      v127 = v131;
    }
    const float8 t132 = (v127.lo + v127.hi);
    const float4 t133 = (t132.lo + t132.hi);
    const float2 t134 = (t133.lo + t133.hi);
    const float t135 = (t134.lo + t134.hi);
    const float v136 = (v111 + t135);
    float v137 = v136;
    for (int v138 = v125; v138 < 1024; v138 += 1) {
      __global float* const v139 = ((__global float*)v6 + v138);
      const uchar v140 = ((uchar)(v138 < n_cols));
      const float v141 = (v140 ? *v139 : -INFINITY);
      const float v142 = (v141 - v87);
      const float v143 = exp(v142);
      v3[v138] = v143;
      const float v144 = (v137 + v143);
      v137 = v144;
    }
    const int v145 = ((int)((uint)v4 * (uint)output_row_stride));
    __global float* const v146 = ((__global float*)output_ptr + v145);
    const float16 v147 = ((float16)(v137));
    const int v148 = min(1024, n_cols);
    const int v149 = max(v148, 0);
    const int v150 = ((int)(v149 / 16));
    const int v151 = ((int)((uint)v150 * (uint)16));
    for (int v152 = 0; v152 < v151; v152 += 16) {
      __global float* const v153 = ((__global float*)v146 + v152);
      const float16 v154 = KD_VLD(float, 16, __private, v3 + v152);
      const float16 v155 = kd_divu16(v154, v137);
      KD_VST(float, 16, __global, v153, v155);
    }
    for (int v156 = v151; v156 < v149; v156 += 1) {
      __global float* const v157 = ((__global float*)v146 + v156);
      const float v158 = v3[v156];
      const float v159 = (v158 / v137);
      const uchar v160 = ((uchar)(v156 < n_cols));
      if (v160) *v157 = v159;
    }
  }
}
