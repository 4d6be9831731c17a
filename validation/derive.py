# Arithmetic behind every derived "measured" figure in cases.yaml (run: /usr/bin/python3 validation/derive.py).
# Inputs are the published numbers exactly as printed in the cited source.
def p(name, val, unit, expr): print(f"{name:42s} {val:12.6g} {unit:3s}  = {expr}")

print("== single GEMMs: time = 2*M*N*K / (published TFLOP/s) ==")
g = [("a100_mamf_bf16", 1024,10240,5120, 271.2e12), ("h100_mamf_bf16", 2048,2048,13312, 794.5e12),
     ("h100_mamf_fp8", 1024,9216,14336, 1402.6e12),
     ("xla_sm90_4096", 4096,4096,4096, 783328793548203), ("xla_sm90_2048", 2048,2048,2048, 631984593290170),
     ("xla_sm90_1024", 1024,1024,1024, 236298816901408), ("xla_sm90_256", 256,256,256, 6452775384615),
     ("xla_sm90_4096x256x4096", 4096,256,4096, 376223484232655),
     ("deepgemm_64x2112x7168", 64,2112,7168, 206e12), ("deepgemm_64x7168x16384", 64,7168,16384, 336e12),
     ("deepgemm_128x7168x16384", 128,7168,16384, 645e12), ("deepgemm_4096x7168x16384", 4096,7168,16384, 1358e12),
     ("deepgemm_4096x4096x7168", 4096,4096,7168, 1304e12), ("deepgemm_4096x32768x512", 4096,32768,512, 590e12)]
for n,M,N,K,r in g: p(n, 2*M*N*K/r*1e6, "us", f"2*{M}*{N}*{K} / {r:.6g}")

print("== attention kernels: FA benchmark FLOPs = 4*b*s^2*h*d (/2 causal); fwd+bwd = 3.5x fwd ==")
def fa(name, s, d, causal, mode, tf):
    b = 16384//s; h = 2048//d
    f = 4*b*s*s*h*d/(2 if causal else 1) * (3.5 if mode=="fwd_bwd" else 1.0)
    p(name, f/tf*1e3, "ms", f"4*{b}*{s}^2*{h}*{d}{'/2' if causal else ''}{'*3.5' if mode=='fwd_bwd' else ''} = {f:.4g} FLOP / {tf:.4g}")
fa("fa2_a100_fwdbwd_hd128_16k", 16384,128,False,"fwd_bwd",203e12)
fa("fa2_a100_fwdbwd_causal_hd128_16k", 16384,128,True,"fwd_bwd",189e12)
fa("fa2_a100_fwdbwd_hd64_512", 512,64,False,"fwd_bwd",132e12)
fa("fa2_h100_fwdbwd_hd128_16k", 16384,128,False,"fwd_bwd",338e12)
fa("fa2_h100_fwdbwd_causal_hd128_2k", 2048,128,True,"fwd_bwd",265e12)
fa("fa3_h100_fwd_hd128_16k", 16384,128,False,"fwd",648e12)
fa("fa3_h100_fwd_causal_hd128_16k", 16384,128,True,"fwd",616e12)
fa("fa3_h100_fwd_hd256_16k", 16384,256,False,"fwd",756e12)
fa("fa3_h100_fwd_causal_hd64_512", 512,64,True,"fwd",197e12)

print("== PyTorch standard attention (FA2 paper's 'Pytorch' bars, A100, non-causal), same FLOP convention ==")
for hd, bars in ((64, {512: 36, 1024: 40, 2048: 43, 4096: 45, 8192: 46}),
                 (128, {512: 53, 1024: 67, 2048: 76, 4096: 79, 8192: 86})):
    for s, tf in bars.items():
        fa(f"torch_a100_unfused_fwdbwd_hd{hd}_s{s}", s, hd, False, "fwd_bwd", tf*1e12)

print("== gpt-fast (batch 1, 5-token prompt, 200 new tokens): request time = 200 / (tokens/s) ==")
for n,t in [("llama2_7b_bf16_a100",104.9),("llama2_7b_int8_a100",155.58),("llama31_8b_bf16_a100",93.89),
            ("llama2_70b_tp8_a100",62.50),("llama2_7b_tp8_a100",328.43)]:
    p(n, 200/t, "s", f"200 / {t}")

print("== TensorRT-LLM v0.6.1 static batching: request time = batch*OSL / (out tok/s/GPU * TP) ==")
for n,b,osl,tp,t in [("trtllm_h100_fp8_llama7b_b768_128_128",768,128,1,19694),
                     ("trtllm_h100_fp8_llama7b_b80_2048_128",80,128,1,2244),
                     ("trtllm_h100_fp8_llama70b_tp2_b1024_128_128",1024,128,2,2657),
                     ("trtllm_h100_fp8_llama70b_tp2_b64_2048_2048",64,2048,2,547),
                     ("trtllm_a100_fp16_llama7b_b384_128_128",384,128,1,5586)]:
    p(n, b*osl/(t*tp), "s", f"{b}*{osl} / ({t}*{tp})")

print("== Thor TensorRT Edge-LLM: per decode step = batch / generation tok/s ==")
for n,b,t in [("thor_llama31_8b_nvfp4_bs1",1,54.9),("thor_llama31_8b_int4awq_bs1",1,50.8),
              ("thor_llama31_8b_nvfp4_bs8",8,308.7),("thor_qwen3_8b_nvfp4_bs1_kv2048",1,44.4),
              ("thor_qwen3_8b_nvfp4_bs8_kv2048",8,252.0)]:
    p(n, b/t*1e3, "ms", f"{b} / {t}")

print("== Megatron-LM (Narayanan et al. 2021) A100: T = 96*B*s*l*h^2*(1+s/(6h)+V/(16lh)) / (n * X) ==")
V=51200; s=2048
for n,h,l,B,N,X in [("megatron_a100_gpt_1_7b",2304,24,512,32,137e12),("megatron_a100_gpt_3_6b",3072,30,512,64,138e12),
                    ("megatron_a100_gpt_7_5b",4096,36,512,128,142e12),("megatron_a100_gpt_18b",6144,40,1024,256,135e12),
                    ("megatron_a100_gpt_39b",8192,48,1536,512,138e12),("megatron_a100_gpt_76b",10240,60,1792,1024,140e12),
                    ("megatron_a100_gpt_145b",12288,80,2304,1536,148e12),("megatron_a100_gpt_310b",16384,96,2160,1920,155e12),
                    ("megatron_a100_gpt_530b",20480,105,2520,2520,163e12),("megatron_a100_gpt_1t",25600,128,3072,3072,163e12)]:
    F = 96*B*s*l*h*h*(1+s/(6*h)+V/(16*l*h))
    p(n, F/(N*X), "s", f"96*{B}*{s}*{l}*{h}^2*(1+{s}/(6*{h})+{V}/(16*{l}*{h})) = {F:.5g} FLOP / ({N}*{X:.4g})")

print("== Megatron-Core r0.8.0 H100 (README 2024-07): T = 72*B*s*l*h^2*(1+s/(6h)+V/(12lh)) / (n * X)  [num_floating_point_operations, MHA, ffn=4h, no swiglu] ==")
V=131072; s=4096
for n,h,l,B,N,X in [("mcore_h100_gpt_1_7b",2048,24,192,48,408.8e12),("mcore_h100_gpt_32b",7168,48,192,384,459.6e12),
                    ("mcore_h100_gpt_16b",6144,32,192,192,489.1e12)]:
    F = 12*B*s*l*h*h*((1+1+s/h) + 4 + V/(2*l*h))
    p(n, F/(N*X), "s", f"12*{B}*{s}*{l}*{h}^2*((2+{s}/{h})+4+{V}/(2*{l}*{h})) = {F:.5g} FLOP / ({N}*{X:.4g})")

print("== NeMo / Megatron-Bridge DGX-H100: step = GBS*seq / (tokens/s/GPU * GPUs) ==")
for n,gbs,sq,t,N in [("nemo2407_h100_fp8_llama2_7b",128,4096,16847,8),("nemo2407_h100_fp8_llama2_13b",128,4096,8646,16),
                     ("nemo2407_h100_fp8_llama2_70b",128,4096,1707,64),("nemo2407_h100_fp8_gpt3_175b_128gpu",256,2048,726,128),
                     ("mbridge2511_h100_fp8_llama3_8b_fsdp",128,8192,14451,8),("mbridge2511_h100_fp8_llama3_70b",128,8192,1602,64)]:
    p(n, gbs*sq/(t*N), "s", f"{gbs}*{sq} / ({t}*{N})")

print("== Llama 3 405B pre-training on H100 (Llama 3 paper Table 4): T = tokens * F / (GPUs * TFLOP/s) ==")
# F per token = 6 * (matmul parameters: 126 layers + LM head; the input embedding is a gather)
#             + 6 * L * (heads * head_dim) * s  (attention's QK^T and PV, causal: half of 12 * L * d * s)
L, d, nh, hd, nkv, ff, V, s = 126, 16384, 128, 128, 8, 53248, 128256, 8192
layer = d*nh*hd + 2*d*nkv*hd + nh*hd*d + 3*d*ff
F = 6*(L*layer + V*d) + 6*L*nh*hd*s
for n,N,X in [("llama3_405b_h100_8192gpu",8192,430e12),("llama3_405b_h100_16384gpu",16384,400e12)]:
    T = 2048*8192
    p(n, T*F/(N*X), "s", f"2048*8192 tokens * {F:.5g} FLOP/token / ({N}*{X:.3g})")

print("== MaxText v5e (README 2023-10, TFLOP count of that commit): T = (6*N*s*b + 12*H*L*hd*s^2*b) / X per chip ==")
def mt(name, E, H, M, L, hd, b, X, V=32768, s=2048):
    N = L*(4*E*H*hd + 2*E*M + 2*E + 2*hd + 32*H) + V*E + E   # attn q,k,v,o; relu MLP wi,wo; 2 layer norms; q/k layernorm; relpos bias; tied embedding; final norm
    F = 6*N*s*b + 12*H*L*hd*s*s*b
    p(name, F/X, "s", f"N={N:.6g}; 6*N*{s}*{b} + 12*{H}*{L}*{hd}*{s}^2*{b} = {F:.5g} FLOP / {X:.4g}")
mt("maxtext_v5e_16b",5120,32,32768,32,256,6,120e12)
mt("maxtext_v5e_32b",10240,32,32768,32,256,4,132e12)
mt("maxtext_v5e_64b",10240,32,32768,64,256,2,118e12)
mt("maxtext_v5e_128b",10240,64,65536,64,256,1,110e12)
