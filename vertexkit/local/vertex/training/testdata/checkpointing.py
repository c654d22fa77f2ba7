"""Counts to 6 steps, checkpointing each step to AIP_CHECKPOINT_DIR (gs://); the first run
crashes after step 3. A restarted run resumes from the checkpoint and writes, to AIP_MODEL_DIR,
which step it resumed from."""

import json
import os
import sys

from google.cloud import storage

client = storage.Client()


def blob(uri: str) -> storage.Blob:
    bucket, _, name = uri.removeprefix("gs://").partition("/")
    return client.bucket(bucket).blob(name)


checkpoint = blob(os.environ["AIP_CHECKPOINT_DIR"] + "state.json")
start = json.loads(checkpoint.download_as_text())["step"] if checkpoint.exists() else 0
print(f"starting at step {start}")
for step in range(start + 1, 7):
    checkpoint.upload_from_string(json.dumps({"step": step}))
    print(f"checkpointed step {step}")
    if start == 0 and step == 3:
        print("simulated worker crash", file=sys.stderr)
        os._exit(1)
result = {"resumed_from": start, "final_step": 6}
blob(os.environ["AIP_MODEL_DIR"] + "result.json").upload_from_string(json.dumps(result))
