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
    for (int v8 = 0; v8 < 1024; v8 += 1) {
      __global float* const v9 = ((__global float*)v7 + v8);
      const uchar v10 = ((uchar)(v8 < n_cols));
      const float v11 = (v10 ? *v9 : -INFINITY);
      v3[v8] = v11;
    }
    const float v12 = v3[0];
    float v13 = v12;
    for (int v14 = 1; v14 < 1024; v14 += 1) {
      const float v15 = v3[v14];
      const float v16 = fmax(v13, v15);
      v13 = v16;
    }
    for (int v17 = 0; v17 < 1024; v17 += 1) {
      const float v18 = v3[v17];
      const float v19 = (v18 - v13);
      const float v20 = exp(v19);
      v4[v17] = v20;
    }
    const float v21 = v4[0];
    float v22 = v21;
    for (int v23 = 1; v23 < 1024; v23 += 1) {
      const float v24 = v4[v23];
      const float v25 = (v22 + v24);
      v22 = v25;
    }
    const int v26 = ((int)((uint)v5 * (uint)output_row_stride));
    __global float* const v27 = ((__global float*)output_ptr + v26);
    for (int v28 = 0; v28 < 1024; v28 += 1) {
      __global float* const v29 = ((__global float*)v27 + v28);
      const float v30 = v4[v28];
      const float v31 = (v30 / v22);
      const uchar v32 = ((uchar)(v28 < n_cols));
      if (v32) *v29 = v31;
    }
  }
}
