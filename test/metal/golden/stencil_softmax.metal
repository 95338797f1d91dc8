// kernel mlcc_k0
#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

struct _2
{
    uint _m0[1];
};

struct _7
{
    float _m0[1];
};

kernel void mlcc_k0(device _2& mlcc_k0_arg_0 [[buffer(0)]], device _7& mlcc_k0_arg_1 [[buffer(1)]], device _7& mlcc_k0_arg_2 [[buffer(2)]], device _7& mlcc_k0_arg_3 [[buffer(3)]])
{
    uint _36;
    _36 = 0u;
    uint _42;
    float _46;
    for (;;)
    {
        if (int(_36) < int(16u))
        {
            _42 = 0u;
            uint _49;
            float _50;
            for (;;)
            {
                if (int(_42) < int(16u))
                {
                    _49 = 0u;
                    _50 = 0.0;
                    for (; int(_49) < int(9u); )
                    {
                        uint _52 = _49 / 3u;
                        uint _53 = _52 % 3u;
                        uint _55 = (_36 + _53) + 4294967295u;
                        uint _57 = (int(_55) < int(15u)) ? _55 : 15u;
                        uint _60 = _49 % 3u;
                        uint _62 = (_42 + _60) + 4294967295u;
                        uint _64 = (int(_62) < int(15u)) ? _62 : 15u;
                        float _79 = _50 + (mlcc_k0_arg_1._m0[(mlcc_k0_arg_0._m0[0u] + (((int(_57) > int(0u)) ? _57 : 0u) * 16u)) + ((int(_64) > int(0u)) ? _64 : 0u)] * mlcc_k0_arg_2._m0[(mlcc_k0_arg_0._m0[1u] + (_53 * 3u)) + _60]);
                        _46 = _79;
                        _49++;
                        _50 = _79;
                        continue;
                    }
                    mlcc_k0_arg_3._m0[(mlcc_k0_arg_0._m0[2u] + (_36 * 16u)) + _42] = _46;
                    _42++;
                    continue;
                }
                else
                {
                    break;
                }
            }
            _36++;
            continue;
        }
        else
        {
            break;
        }
    }
}

// kernel mlcc_k1
#pragma clang diagnostic ignored "-Wmissing-prototypes"
#pragma clang diagnostic ignored "-Wmissing-braces"

#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

template<typename T, size_t Num>
struct spvUnsafeArray
{
    T elements[Num ? Num : 1];
    
    thread T& operator [] (size_t pos) thread
    {
        return elements[pos];
    }
    constexpr const thread T& operator [] (size_t pos) const thread
    {
        return elements[pos];
    }
    
    device T& operator [] (size_t pos) device
    {
        return elements[pos];
    }
    constexpr const device T& operator [] (size_t pos) const device
    {
        return elements[pos];
    }
    
    constexpr const constant T& operator [] (size_t pos) const constant
    {
        return elements[pos];
    }
    
    threadgroup T& operator [] (size_t pos) threadgroup
    {
        return elements[pos];
    }
    constexpr const threadgroup T& operator [] (size_t pos) const threadgroup
    {
        return elements[pos];
    }
};

struct _2
{
    spvUnsafeArray<float, 256> _m0;
};

struct _14
{
    uint _m0[1];
};

struct _18
{
    float _m0[1];
};

kernel void mlcc_k1(device _14& mlcc_k1_arg_0 [[buffer(0)]], device _18& mlcc_k1_arg_1 [[buffer(1)]], device _18& mlcc_k1_arg_2 [[buffer(2)]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]])
{
    threadgroup _2 _workgroup_mem_3;
    uint _40 = mlcc_k1_arg_0._m0[1u];
    uint _42 = mlcc_k1_arg_0._m0[0u];
    uint _50;
    _50 = gl_WorkGroupID.x;
    uint _55;
    float _57;
    uint _61;
    float _62;
    float _175;
    for (;;)
    {
        if (int(_50) < int(16u))
        {
            _55 = gl_LocalInvocationID.x;
            _61 = _55;
            _62 = as_type<float>(0xff800000u /* -inf */);
            for (; int(_61) < int(16u); )
            {
                uint _66 = (_42 + (_50 * 16u)) + _61;
                float _71 = (mlcc_k1_arg_1._m0[_66] > _62) ? mlcc_k1_arg_1._m0[_66] : _62;
                _57 = _71;
                _61 += 256u;
                _62 = _71;
                continue;
            }
            _workgroup_mem_3._m0[_55] = _57;
            threadgroup_barrier(mem_flags::mem_threadgroup);
            bool _77 = _55 < 128u;
            if (_77)
            {
                uint _81 = _55 + 128u;
                _workgroup_mem_3._m0[_55] = (_workgroup_mem_3._m0[_81] > _workgroup_mem_3._m0[_55]) ? _workgroup_mem_3._m0[_81] : _workgroup_mem_3._m0[_55];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            bool _89 = _55 < 64u;
            if (_89)
            {
                uint _93 = _55 + 64u;
                _workgroup_mem_3._m0[_55] = (_workgroup_mem_3._m0[_93] > _workgroup_mem_3._m0[_55]) ? _workgroup_mem_3._m0[_93] : _workgroup_mem_3._m0[_55];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            bool _101 = _55 < 32u;
            if (_101)
            {
                uint _105 = _55 + 32u;
                _workgroup_mem_3._m0[_55] = (_workgroup_mem_3._m0[_105] > _workgroup_mem_3._m0[_55]) ? _workgroup_mem_3._m0[_105] : _workgroup_mem_3._m0[_55];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            bool _113 = _55 < 16u;
            if (_113)
            {
                uint _117 = _55 + 16u;
                _workgroup_mem_3._m0[_55] = (_workgroup_mem_3._m0[_117] > _workgroup_mem_3._m0[_55]) ? _workgroup_mem_3._m0[_117] : _workgroup_mem_3._m0[_55];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            bool _125 = _55 < 8u;
            if (_125)
            {
                uint _129 = _55 + 8u;
                _workgroup_mem_3._m0[_55] = (_workgroup_mem_3._m0[_129] > _workgroup_mem_3._m0[_55]) ? _workgroup_mem_3._m0[_129] : _workgroup_mem_3._m0[_55];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            bool _137 = _55 < 4u;
            if (_137)
            {
                uint _141 = _55 + 4u;
                _workgroup_mem_3._m0[_55] = (_workgroup_mem_3._m0[_141] > _workgroup_mem_3._m0[_55]) ? _workgroup_mem_3._m0[_141] : _workgroup_mem_3._m0[_55];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            bool _149 = _55 < 2u;
            if (_149)
            {
                uint _153 = _55 + 2u;
                _workgroup_mem_3._m0[_55] = (_workgroup_mem_3._m0[_153] > _workgroup_mem_3._m0[_55]) ? _workgroup_mem_3._m0[_153] : _workgroup_mem_3._m0[_55];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            bool _161 = _55 < 1u;
            if (_161)
            {
                uint _165 = _55 + 1u;
                _workgroup_mem_3._m0[_55] = (_workgroup_mem_3._m0[_165] > _workgroup_mem_3._m0[_55]) ? _workgroup_mem_3._m0[_165] : _workgroup_mem_3._m0[_55];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            float _174 = _workgroup_mem_3._m0[0u];
            threadgroup_barrier(mem_flags::mem_threadgroup);
            uint _179 = _55;
            float _180 = 0.0;
            for (; int(_179) < int(16u); )
            {
                uint _184 = (_42 + (_50 * 16u)) + _179;
                float _190 = _180 + exp(mlcc_k1_arg_1._m0[_184] - _174);
                _175 = _190;
                _179 += 256u;
                _180 = _190;
                continue;
            }
            _workgroup_mem_3._m0[_55] = _175;
            threadgroup_barrier(mem_flags::mem_threadgroup);
            if (_77)
            {
                _workgroup_mem_3._m0[_55] += _workgroup_mem_3._m0[_55 + 128u];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            if (_89)
            {
                _workgroup_mem_3._m0[_55] += _workgroup_mem_3._m0[_55 + 64u];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            if (_101)
            {
                _workgroup_mem_3._m0[_55] += _workgroup_mem_3._m0[_55 + 32u];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            if (_113)
            {
                _workgroup_mem_3._m0[_55] += _workgroup_mem_3._m0[_55 + 16u];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            if (_125)
            {
                _workgroup_mem_3._m0[_55] += _workgroup_mem_3._m0[_55 + 8u];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            if (_137)
            {
                _workgroup_mem_3._m0[_55] += _workgroup_mem_3._m0[_55 + 4u];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            if (_149)
            {
                _workgroup_mem_3._m0[_55] += _workgroup_mem_3._m0[_55 + 2u];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            if (_161)
            {
                _workgroup_mem_3._m0[_55] += _workgroup_mem_3._m0[_55 + 1u];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            float _275 = _workgroup_mem_3._m0[0u];
            threadgroup_barrier(mem_flags::mem_threadgroup);
            float _276 = 1.0 / _275;
            for (uint _279 = _55; int(_279) < int(16u); )
            {
                uint _281 = _50 * 16u;
                mlcc_k1_arg_2._m0[(_40 + _281) + _279] = exp(mlcc_k1_arg_1._m0[(_42 + _281) + _279] - _174) * _276;
                _279 += 256u;
                continue;
            }
            _50 += gl_NumWorkGroups.x;
            continue;
        }
        else
        {
            break;
        }
    }
}

