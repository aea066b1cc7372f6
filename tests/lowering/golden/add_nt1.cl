#pragma OPENCL FP_CONTRACT OFF
__kernel void add_kernel(
    const __global uchar* x_base,
    ulong x_off,
    const __global uchar* y_base,
    ulong y_off,
    __global uchar* out_base,
    ulong out_off,
    int n)
{
  __global float* restrict const x = (__global float*)(x_base + x_off);
  __global float* restrict const y = (__global float*)(y_base + y_off);
  __global float* restrict const out = (__global float*)(out_base + out_off);
  const int v1 = ((int)get_group_id(0));
  const int v2 = ((int)((uint)v1 * (uint)64));
  for (int v3 = 0; v3 < 64; v3 += 1) {
    const int v4 = ((int)((uint)v2 + (uint)v3));
    __global float* const v5 = ((__global float*)x + v4);
    const uchar v6 = ((uchar)(v4 < n));
    const float v7 = (v6 ? *v5 : 0.0f);
    __global float* const v8 = ((__global float*)y + v4);
    const float v9 = (v6 ? *v8 : 0.0f);
    __global float* const v10 = ((__global float*)out + v4);
    const float v11 = (v7 + v9);
    if (v6) *v10 = v11;
  }
}
