#pragma OPENCL FP_CONTRACT OFF
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
  for (int v3 = 0; v3 < 1024; v3 += 1) {
    const int v4 = ((int)((uint)v2 + (uint)v3));
    __global float* const v5 = ((__global float*)x_ptr + v4);
    const uchar v6 = ((uchar)(v4 < n_elements));
    const float v7 = (v6 ? *v5 : 0.0f);
    __global float* const v8 = ((__global float*)y_ptr + v4);
    const float v9 = (v6 ? *v8 : 0.0f);
    __global float* const v10 = ((__global float*)output_ptr + v4);
    const float v11 = (v7 + v9);
    if (v6) *v10 = v11;
  }
}
