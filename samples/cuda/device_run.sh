#!/bin/bash
# crashlens fix/run on real FlashInfer (device machine). Writes everything under $OUT.
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1 MAX_JOBS=16
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/venv/lib/python3.12/site-packages .whl/*.whl > $OUT/pip.log 2>&1 || { echo pip failed; tail $OUT/pip.log; exit 1; }
export PYTHONPATH=/tmp/venv/lib/python3.12/site-packages:$PWD/src
cl() { python3 -c "import sys; from crashlens.cli import main; sys.argv[0]='crashlens'; main()" "$@"; }
{ nvidia-smi -L; which nvcc; nvcc --version | tail -2; python3 -c "import torch, flashinfer; print(torch.__version__, flashinfer.__version__, torch.cuda.get_device_capability())"; } > $OUT/env.txt 2>&1
cat $OUT/env.txt
cp samples/repro/cuda/fp4_model.py /tmp/fp4_model.orig
echo "== step 1: the crash, unpatched"
timeout 400 python3 samples/repro/cuda/fp4_model.py > $OUT/cuda-flashinfer-fp4.log 2>&1; echo "rc=$?"
tail -5 $OUT/cuda-flashinfer-fp4.log
echo "== step 2: crashlens fix LOG (diff)"
cl fix $OUT/cuda-flashinfer-fp4.log > $OUT/fix.diff 2> $OUT/fix.err; echo "rc=$?"; cat $OUT/fix.err
echo "== step 3: crashlens run --fix"
timeout 300 bash -c "python3 -c \"import sys; from crashlens.cli import main; sys.argv[0]='crashlens'; main()\" run --fix --format json -- python3 samples/repro/cuda/fp4_model.py > $OUT/run-trail.json 2> $OUT/run-output.log"; echo "rc=$?"
tail -15 $OUT/run-output.log
python3 -c "import json; d=json.load(open('$OUT/run-trail.json')); print([(r['round'], r['outcome'], (r['fix'] or {}).get('kind')) for r in d['rounds']])"
cp samples/repro/cuda/_crashlens_*.py $OUT/ 2>/dev/null
echo "== step 4: revert"
cl fix --revert; cmp samples/repro/cuda/fp4_model.py /tmp/fp4_model.orig && echo "reverted byte for byte"; ls samples/repro/cuda
