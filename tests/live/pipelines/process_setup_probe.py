"""The target of a test table's process_setup entry (tests/live/check_versions.py): records each
call's thread, for process_setup_script.py to check."""
import threading

calls = []


def setup():
    calls.append(threading.get_ident())


def yes():
    """A skip_if that skips its entry."""
    return True


def no():
    """A skip_if that does not."""
    return False
