#pragma OPENCL FP_CONTRACT OFF
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
  float v4[1024];
  for (int v5 = v1; (v2 > 0 ? v5 < n_rows : v5 > n_rows); v5 += v2) {
    const int v6 = ((int)((uint)v5 * (uint)input_row_stride));
    __global float* const v7 = ((__global float*)input_ptr + v6);
    const int v8 = min(1024, n_cols);
    const int v9 = max(v8, 0);
    const int v10 = ((int)(v9 / 16));
    const int v11 = ((int)((uint)v10 * (uint)16));
    for (int v12 = 0; v12 < v11; v12 += 16) {
      __global float* const v13 = ((__global float*)v7 + v12);
      const float16 v14 = vload16(0, v13);
      vstore16(v14, 0, v3 + v12);
    }
    for (int v15 = v11; v15 < 1024; v15 += 1) {
      __global float* const v16 = ((__global float*)v7 + v15);
      const uchar v17 = ((uchar)(v15 < n_cols));
      const float v18 = (v17 ? *v16 : -INFINITY);
      v3[v15] = v18;
    }
    const float v19 = v3[0];
    const float16 v20 = ((float16)(v19));
    float16 v21 = v20;
    for (int v22 = 1; v22 < 1009; v22 += 16) {
      const float16 v23 = vload16(0, v3 + v22);
      const float16 v24 = fmax(v21, v23);
      v21 = v24;
    }
    const float8 t25 = fmax(v21.lo, v21.hi);
    const float4 t26 = fmax(t25.lo, t25.hi);
    const float2 t27 = fmax(t26.lo, t26.hi);
    const float t28 = fmax(t27.lo, t27.hi);
    float v29 = t28;
    for (int v30 = 1009; v30 < 1024; v30 += 1) {
      const float v31 = v3[v30];
      const float v32 = fmax(v29, v31);
      v29 = v32;
    }
    const float16 v33 = ((float16)(v29));
    for (int v34 = 0; v34 < 1024; v34 += 16) {
      const float16 v35 = vload16(0, v3 + v34);
      const float16 v36 = (v35 - v33);
      const float16 v37 = exp(v36);
      vstore16(v37, 0, v4 + v34);
    }
    const float v38 = v4[0];
    const float16 v39 = ((float16)(-0.0f));
    float16 v40 = v39;
    for (int v41 = 1; v41 < 1009; v41 += 16) {
      const float16 v42 = vload16(0, v4 + v41);
      const float16 v43 = (v40 + v42);
      v40 = v43;
    }
    const float8 t44 = (v40.lo + v40.hi);
    const float4 t45 = (t44.lo + t44.hi);
    const float2 t46 = (t45.lo + t45.hi);
    const float t47 = (t46.lo + t46.hi);
    const float v48 = (v38 + t47);
    float v49 = v48;
    for (int v50 = 1009; v50 < 1024; v50 += 1) {
      const float v51 = v4[v50];
      const float v52 = (v49 + v51);
      v49 = v52;
    }
    const int v53 = ((int)((uint)v5 * (uint)output_row_stride));
    __global float* const v54 = ((__global float*)output_ptr + v53);
    const float16 v55 = ((float16)(v49));
    const int v56 = min(1024, n_cols);
    const int v57 = max(v56, 0);
    const int v58 = ((int)(v57 / 16));
    const int v59 = ((int)((uint)v58 * (uint)16));
    for (int v60 = 0; v60 < v59; v60 += 16) {
      __global float* const v61 = ((__global float*)v54 + v60);
      const float16 v62 = vload16(0, v4 + v60);
      const float16 v63 = (v62 / v55);
      vstore16(v63, 0, v61);
    }
    for (int v64 = v59; v64 < 1024; v64 += 1) {
      __global float* const v65 = ((__global float*)v54 + v64);
      const float v66 = v4[v64];
      const float v67 = (v66 / v49);
      const uchar v68 = ((uchar)(v64 < n_cols));
      if (v68) *v65 = v67;
    }
  }
}
