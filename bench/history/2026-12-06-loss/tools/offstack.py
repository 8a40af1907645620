import re,sys,collections
# usage: offstack.py events.txt stacks.txt tid
exec(open('/tmp/offcpu_lib.py').read()) if False else None
tid=sys.argv[3]
rx=re.compile(r'^\s*(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)$')
ev=[]
for line in open(sys.argv[1]):
    m=rx.match(line)
    if not m: continue
    ctx,cpu,t,name,rest=m.groups(); t=float(t)
    if name=='sched_switch':
        d=dict(kv.split('=',1) for kv in re.findall(r'(\w+=\S+)',rest))
        if d['prev_pid']==tid: ev.append((t,'out'))
        if d['next_pid']==tid: ev.append((t,'in'))
    elif name=='sched_wakeup' and ('pid=%s '%tid) in rest+' ':
        ev.append((t,'wake',ctx))
ev.sort(key=lambda e:e[0])
stacks={}
cur=None
for line in open(sys.argv[2]):
    m=re.match(r'^\s*([\d.]+):\s+sched:(\w+):',line)
    if m:
        cur=(float(m.group(1)),m.group(2)); stacks.setdefault(cur,[]) ; continue
    m=re.match(r'^\s+([0-9a-f]+)\s+(\S+)',line)
    if m and cur:
        addr,sym=m.groups()
        if not addr.startswith('ffffffff'): stacks[cur].append(sym)
def key(st):
    # first user frames up to record_thread_main
    out=[]
    for s in st:
        out.append(s)
        if s in('record_thread_main',): break
    return ' <- '.join(out[:7])
tot=collections.Counter(); cnt=collections.Counter(); mx=collections.Counter()
t0=None;k=None;waker=None
for e in ev:
    if e[1]=='out':
        t0=e[0]; k=key(stacks.get((e[0],'sched_switch'),['?'])); w=None
    elif e[1]=='wake' and t0 is not None and w is None: w=e[0]
    elif e[1]=='in' and t0 is not None:
        d=(w or e[0])-t0; tot[k]+=d; cnt[k]+=1; mx[k]=max(mx[k],d); t0=None
for k,v in tot.most_common(): print('%8.1f ms  n=%5d  max %6.2f ms  %s'%(v*1e3,cnt[k],mx[k]*1e3,k))
