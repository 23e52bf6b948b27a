#!/usr/bin/env python3
"""Brings lines over 110 columns within 110 (check_code_shape.py's width rule), touching nothing else: a comment
line's paragraph is re-wrapped from that line on (list items keep their indentation), a separator comment's
dashes are cut, a trailing comment after code moves above it, and a long code line is re-broken by clang-format
on that line only (the project's style below). Run it on the files it names, then build and read the diff:

    python3 docs/tools/wrap_long_lines.py kernels/maxsim_v1.cu ...
"""
import re,subprocess,sys
W=110
STYLE = '{BasedOnStyle: LLVM, IndentWidth: 4, ColumnLimit: 110, BreakBeforeBraces: Linux, AllowShortFunctionsOnASingleLine: All, AllowShortIfStatementsOnASingleLine: WithoutElse, AllowShortLoopsOnASingleLine: true, AlignAfterOpenBracket: Align, PointerAlignment: Right, ReflowComments: false, SortIncludes: false, IndentCaseLabels: false, SpaceAfterCStyleCast: false, AlignTrailingComments: false, AlignConsecutiveMacros: false, AlignOperands: true, BinPackArguments: true, BinPackParameters: true, Cpp11BracedListStyle: true, AlwaysBreakTemplateDeclarations: No}'
# A comment line: optional indent, then "/* ", " * " or "// " prefix, then text.
CL=re.compile(r'^(\s*)(/\* |\* |// |/\*\*? ?|\*)(.*)$')
def is_comment_line(l, incomment):
    s=l.lstrip()
    return incomment or s.startswith("/*") or s.startswith("//")
def comment_state(L):
    """for each line: True when the line is entirely comment text (starts inside or at a comment, has no code)"""
    st=[]; inside=False
    for l in L:
        s=l.strip()
        if inside:
            st.append(True)
            if "*/" in s: inside=False
            continue
        if s.startswith("/*"):
            st.append(True)
            if "*/" not in s[2:]: inside=True
            continue
        if s.startswith("//"): st.append(True); continue
        st.append(False)
        # a comment opened after code and not closed on the line
        i=s.rfind("/*")
        if i>=0 and "*/" not in s[i:] : inside=True
    return st
def split_prefix(l):
    m=re.match(r'^(\s*)(/\* |\* |// )(.*)$',l.replace("\t","    "))
    if m: return m.group(1),m.group(2),m.group(3)
    m=re.match(r'^(\s*)(\*|/\*|//)$',l)
    if m: return m.group(1),m.group(2),""
    return None
def wrap_comments(L):
    st=comment_state(L)
    out=list(L); changed=True
    i=0
    while i<len(out):
        l=out[i]
        if len(l)<=W or not comment_state(out)[i]:
            i+=1; continue
        p=split_prefix(l)
        if not p: i+=1; continue
        ind,pre,text=p
        closing=text.endswith("*/")
        body=text[:-2].rstrip() if closing else text
        lead=ind+pre
        # keep list-item/table indentation for the continuation
        m=re.match(r'^(\s*(?:- |\d+\. |\w[\w\[\]]* {2,})?)',body)
        cont_extra=" "*len(m.group(1)) if m and m.group(1).strip() else re.match(r'^\s*',body).group(0)
        cpre=ind+" * " if pre=="/* " else ind+pre
        cpre_ind=cpre[:len(cpre)-len(cpre.lstrip())]
        # split body at the last space that keeps the line within W (leave room for " */" if closing)
        room=W-len(lead)
        cut=body.rfind(" ",0,room+1)
        while cut>0 and body[:cut].strip()=="" : cut=-1
        if cut<=len(cont_extra): i+=1; continue
        head,tail=body[:cut].rstrip(),body[cut+1:].lstrip()
        out[i]=lead+head
        # join tail with the next line if it continues the same paragraph
        nxt=out[i+1] if i+1<len(out) else None
        np_=split_prefix(nxt) if nxt is not None and not closing else None
        if np_ and np_[0]+np_[1]==cpre and np_[2] and not np_[2].startswith((" ","-")) \
           and not re.match(r'^\d+\. |\w+ {2,}',np_[2]) and cont_extra=="" and not np_[2].startswith("*/"):
            out[i+1]=cpre+tail+" "+np_[2]
        else:
            out.insert(i+1,cpre+cont_extra+tail+(" */" if closing else ""))
        # the line i now fits; continue with i+1 (it may now be long)
        i+=1
    return out
def prepass(L):
    out=[]
    st=comment_state(L)
    for i,l in enumerate(L):
        if len(l)>W:
            m2=re.match(r'^(\s*/\*.*?)(-{3,})( ?\*/)\s*$',l)
            if m2:
                a,d,b=m2.groups(); extra=len(l.rstrip())-W
                if len(d)-extra>=3: out.append(a+d[:len(d)-extra]+b); continue
            inmacro=l.rstrip().endswith("\\") or (i>0 and L[i-1].rstrip().endswith("\\"))
            if not st[i] and not inmacro:
                m=re.match(r'^(\s*)(\S.*?[;{}),])\s+(/\*(?:(?!\*/).)*\*/)\s*$',l)
                if m and '"' not in m.group(3) and "/*" not in m.group(2) and len(m.group(1)+m.group(2))<=W:
                    ind,code,com=m.groups(); out.append(ind+com); out.append(ind+code); continue
        out.append(l)
    return out
for f in sys.argv[1:]:
    L=open(f,encoding="utf-8").read().split("\n")
    if not any(len(l)>W for l in L): continue
    L=prepass(L)
    L=wrap_comments(L)
    open(f,"w",encoding="utf-8").write("\n".join(L))
    st=comment_state(L)
    args=["--lines=%d:%d"%(i,i) for i,l in enumerate(L,1) if len(l)>W and not st[i-1]]
    if args:
        subprocess.run(["clang-format","-i","--style="+STYLE]+args+[f],check=True)
    L=open(f,encoding="utf-8").read().split("\n")
    n=[i+1 for i,l in enumerate(L) if len(l)>W]
    if n: print(f,"still over:",n[:8])
