"""Runs the PyTorch fixes the lesson docs print, against autograd on the forum's own formulation, in float64.

    /usr/bin/python3 plots/check_doc_snippets.py        # needs torch (Debian: apt-get install python3-torch)

Lesson 2's forward-algorithm loop, lesson 3's MaxSim autograd.Function and lesson 4's fused LatentGRUCell are
taken from docs/lesson-N.md (the python code blocks) exactly as a reader would paste them, and compared on small
random inputs: values and gradients must match the straightforward formulation to float64 rounding. Lesson 5's
snippet needs a GPU build of PyTorch (bf16 addmm with out_dtype) and is not run here.
"""
import os
import re
import sys

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def block(lesson, k):
    """The k-th ```python block (1-based) of docs/lesson-<lesson>.md."""
    text = open(os.path.join(ROOT, "docs", f"lesson-{lesson}.md")).read()
    return re.findall(r"```python\n(.*?)```", text, re.S)[k - 1]


def check(name, err, tol=1e-12):
    print(f"{name}: max |difference| {err:.3g}")
    if not err <= tol:
        sys.exit(f"{name}: the doc's snippet disagrees with autograd (tolerance {tol})")


torch.manual_seed(0)
exec(block(2, 2))
n,t,v,c=3,2,5,4
x=(torch.randn(n,t,v,c,dtype=torch.double)-2).requires_grad_()
bulk=torch.rand(1,t,v-1,c,c,dtype=torch.double).clamp_min(1e-3).requires_grad_()
p0=torch.rand(1,t,c,dtype=torch.double).clamp_min(1e-3).requires_grad_()
def brute(x,bulk,p0):
    a=p0.log()+x[...,0,:]
    for i in range(v-1):
        a=torch.logsumexp(a[...,:,None]+bulk[0,:,i].log()+x[...,i+1,None,:],-2)
    return torch.logsumexp(a,-1)
check("lesson 2 log Z", (forward_algorithm(x,bulk,p0)-brute(x,bulk,p0)).abs().max().item())
if not torch.autograd.gradcheck(forward_algorithm, (x, bulk, p0)):
    sys.exit("lesson 2: gradcheck failed")
print("lesson 2 gradients: torch.autograd.gradcheck passed")
exec(block(3, 1).split("out = MaxSim.apply")[0])
a=torch.randn(2,3,4,dtype=torch.double,requires_grad=True); b=torch.randn(3,5,4,dtype=torch.double,requires_grad=True)
ref=torch.einsum('ijk,mnk->ijmn',a,b).max(-1).values.sum(1)
check("lesson 3 out", (MaxSim.apply(a,b)-ref).abs().max().item())
dout=torch.randn(2,3,dtype=torch.double)
g1=torch.autograd.grad((MaxSim.apply(a,b)*dout).sum(),(a,b)); g2=torch.autograd.grad((ref*dout).sum(),(a,b))
check("lesson 3 da, db", max((p-q).abs().max().item() for p,q in zip(g1,g2)))
exec(block(4, 1))
T,B,X,H=3,2,3,4
x=torch.randn(T,B,X,dtype=torch.double,requires_grad=True); h0=torch.randn(B,H,dtype=torch.double,requires_grad=True)
eps=torch.randn(T,B,H,dtype=torch.double)
We=(0.3*torch.randn(H,2*H,dtype=torch.double)).requires_grad_(); Wi=(0.3*torch.randn(X,3*H,dtype=torch.double)).requires_grad_(); Wz=(0.3*torch.randn(H,3*H,dtype=torch.double)).requires_grad_()
def eager(x,h,eps,We,Wi,Wz):
    outs=[]
    for t in range(T):
        pd=h@We; z=pd[:,:H]+eps[t]*torch.exp(pd[:,H:]/2)
        xr,xu,xn=(x[t]@Wi).chunk(3,1); zr,zu,zn=(z@Wz).chunk(3,1)
        u=torch.sigmoid(xu+zu); nn=torch.tanh(xn+torch.sigmoid(xr+zr)*zn); h=nn+u*(h-nn); outs.append(h)
    return torch.stack(outs)
dout=torch.randn(T,B,H,dtype=torch.double)
g1=torch.autograd.grad((latent_gru(x,h0,eps,We,Wi,Wz)[0]*dout).sum(),(x,h0,We,Wi,Wz))
g2=torch.autograd.grad((eager(x,h0,eps,We,Wi,Wz)*dout).sum(),(x,h0,We,Wi,Wz))
check("lesson 4 dx, dh0, dW_enc, dW_ih, dW_zh", max((p-q).abs().max().item() for p,q in zip(g1,g2)))
