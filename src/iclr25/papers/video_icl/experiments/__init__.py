"""The video_icl experiments (one file each)."""
