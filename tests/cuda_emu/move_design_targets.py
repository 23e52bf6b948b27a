#!/usr/bin/env python3
"""Moves the "Designed for:" / "Today:" statements of the comments right above each __global__ line of the
given .cu files into tests/cuda_emu/design_targets.txt (appended, grouped by file) and deletes them from the
comments (a comment that held nothing else goes). A statement that does not start a comment line, or a comment
with text after it, is printed MANUAL and left alone. Run from the repository root:

    python3 tests/cuda_emu/move_design_targets.py kernels/maxsim_v*.cu kernels/linear_ce_v*.cu
"""
import re,sys
files=sys.argv[1:]
entries=[]
def strip(l):
    t=l.strip()
    if t.startswith("/*"): t=t[2:]
    if t.endswith("*/"): t=t[:-2]
    t=t.strip()
    if t.startswith("*"): t=t[1:].strip()
    return t
for f in files:
    L=open(f).read().split("\n")
    out=list(L); drop=set(); repl={}
    for i,l in enumerate(L):
        m=re.match(r'__global__ .*?([A-Za-z_0-9]+)\s*\(',l)
        if not m: continue
        # find declaration vs definition: skip if ';' before '{'
        name=m.group(1)
        if i==0 or not L[i-1].rstrip().endswith("*/"): continue
        j=i-1
        while "/*" not in L[j]: j-=1
        block=list(range(j,i))
        starts=[k for k in block if re.match(r'\s*(/\*|\*)\s*Designed for:',L[k])]
        if not starts:
            if any("Designed for:" in L[k] for k in block): print("MANUAL",f,i+1,name)
            continue
        k0=starts[0]
        text=" ".join(strip(L[k]) for k in range(k0,i))
        assert text.startswith("Designed for:"),text
        entries.append((name,text,f))
        if k0==j:
            for k in range(j,i): drop.add(k)
        else:
            for k in range(k0,i): drop.add(k)
            repl[k0-1]=L[k0-1].rstrip()+" */"
    new=[repl.get(k,l) for k,l in enumerate(L) if k not in drop]
    open(f,"w").write("\n".join(new))
import textwrap
out=["", ] if entries else []
cur=None
for n,t,f in entries:
    if f!=cur:
        out += ([""] if cur else []) + ["# "+f]; cur=f
    out += textwrap.wrap(n+" "+t, width=110, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False)
with open("tests/cuda_emu/design_targets.txt","a") as o:
    o.write("\n".join(out)+"\n")
print(f"moved {len(entries)} kernels' design targets into tests/cuda_emu/design_targets.txt")
