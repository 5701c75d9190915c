# Metrics of a queue job: its folders' depth (sg_metrics_write).

# sg_metrics_queue: sets sg_m_q to the queue depth series: items in the inbox (those the
# pattern matches), claimed in processing/<claim>/, and in failed/ (hidden files aside).
# shellcheck disable=SC2317  # called by sg_metrics_write; shellcheck misses that when inlined
sg_metrics_queue() {
  local p=schedgen_job_ l=$sg_metrics_labels i n c f
  # shellcheck disable=SC2086  # the pattern is a glob on purpose
  set -- "$sg_inbox"/$sg_pattern
  i=$#
  [ "$i" != 1 ] || [ -e "$1" ] || i=0
  set -- "$sg_processing"/*/*
  n=$#
  [ "$n" != 1 ] || [ -e "$1" ] || n=0
  set -- "$sg_failed"/*
  f=$#
  [ "$f" != 1 ] || [ -e "$1" ] || f=0
  c='queue_items'
  printf -v sg_m_q '# HELP %s%s Queue items by folder: inbox, processing (claimed), failed.\n# TYPE %s%s gauge\n%s%s{%s,state="inbox"} %s\n%s%s{%s,state="processing"} %s\n%s%s{%s,state="failed"} %s\n' \
    "$p" "$c" "$p" "$c" "$p" "$c" "$l" "$i" "$p" "$c" "$l" "$n" "$p" "$c" "$l" "$f"
}
