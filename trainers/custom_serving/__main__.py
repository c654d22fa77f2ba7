from __future__ import annotations

from trainers.custom_serving.server import main

if __name__ == "__main__":
    main()
