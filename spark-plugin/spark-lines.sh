# The Spark lines this project builds, each as <spark line>_<scala binary version>, and the Maven profiles that
# build each one. Sourced by spark-plugin/cross-line.sh and examples/standalone-cluster.sh; the same pairs are in the
# enforcer rule of the root pom.xml and in LineCheck's message.
SPARK_LINES=(3.5_2.12 3.5_2.13 4.0_2.13 4.1_2.13 4.2_2.13)
DEFAULT_LINE=4.2_2.13

# line_profiles LINE: prints the Maven options that build LINE; fails, naming the known lines, for another.
line_profiles() {
  case "$1" in
    3.5_2.12) echo "-Pspark-3.5 -Pscala-2.12" ;;
    3.5_2.13) echo "-Pspark-3.5" ;;
    4.0_2.13) echo "-Pspark-4.0" ;;
    4.1_2.13) echo "-Pspark-4.1" ;;
    4.2_2.13) echo "" ;;
    *) echo "unknown Spark line '$1' (known: ${SPARK_LINES[*]})" >&2; return 1 ;;
  esac
}
