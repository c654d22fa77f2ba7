"""Started by Python in every process whose PYTHONPATH holds this folder (see process_env).

It points Google's client libraries at the local cloud when the local cloud's variables are set
(`vertexkit_redirect` says how and why), audits connections off the machine when asked
(`vertexkit_off_machine_audit`), then runs the `sitecustomize` this one shadows, if any.
"""

import vertexkit_off_machine_audit
import vertexkit_redirect

vertexkit_off_machine_audit.install_from_env()
vertexkit_redirect.install_from_env()
vertexkit_redirect.run_shadowed_sitecustomize(__file__)
