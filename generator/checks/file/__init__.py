"""Checks on the files of a checkout (`file.*`): what may sit in the data folders
(`data_files`), no build state committed (`build_state`), and what a status git reports under
`--changed-since` means (`git_status`).
"""
