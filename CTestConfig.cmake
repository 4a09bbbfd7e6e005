# CDash-style project configuration; `ctest -D Experimental` submits here when a dashboard exists.
set(CTEST_PROJECT_NAME "racelab")
set(CTEST_NIGHTLY_START_TIME "01:00:00 UTC")
set(CTEST_SUBMIT_URL "https://my.cdash.org/submit.php?project=racelab")
set(CTEST_DROP_SITE_CDASH TRUE)
