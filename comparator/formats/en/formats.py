"""English dates on every page, email and export: ISO 8601 (2026-11-01, 2026-11-01 14:05), one format, never the US
month-first forms Django's default English locale writes ("Nov. 1, 2026", "11/01/2026"). Chinese keeps Django's own
zh_Hans formats (2026年11月1日). Templates ask for DATE_FORMAT / DATETIME_FORMAT, never a pattern of their own."""

DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i"
SHORT_DATE_FORMAT = "Y-m-d"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
TIME_FORMAT = "H:i"
MONTH_DAY_FORMAT = "j F"
YEAR_MONTH_FORMAT = "F Y"
FIRST_DAY_OF_WEEK = 1
