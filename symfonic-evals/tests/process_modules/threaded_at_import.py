"""A module that starts a thread when it is imported: a fork server that
learns it from a child must stop forking."""

import threading
import time

threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
