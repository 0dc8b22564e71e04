#!/usr/bin/env bash
# Builds spark-protobuf (Spark's from_protobuf / to_protobuf) from a Spark source tree, for the
# from_protobuf oracle test and benchmarks/kafka_protobuf_read.py where the Maven repository serves
# no org.apache.spark:spark-protobuf_2.13 (the mirror these machines reach serves none).
#
#   tools/build_spark_protobuf.sh <spark checkout>/connector/protobuf/src/main/scala <out dir>
#   export SPARKFLOW_SPARK_PROTOBUF_JARS=<out dir>/spark-protobuf.jar:<out dir>/protobuf-java.jar:...
#
# Use the checkout of the Spark release pyspark is (pyspark's spark-common-utils jar names its
# revision in spark-version-info.properties). Compiled with the Scala compiler pyspark ships
# against every jar pyspark ships plus protobuf-java and protobuf-java-util from Maven (the
# deserializer uses JsonFormat); protobuf is not shaded, which matters only for from_protobuf's
# Java-class overloads. PROTOBUF_JAVA_VERSION picks the runtime (default: the one Spark 4.3 bundles).
set -euo pipefail
src=${1:?usage: $0 <connector/protobuf/src/main/scala> <out dir>}
out=${2:?usage: $0 <connector/protobuf/src/main/scala> <out dir>}
python=${PYTHON:-$(dirname "$0")/../.venv/bin/python}
version=${PROTOBUF_JAVA_VERSION:-4.33.5}
jars=$("$python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
scala=$(ls "$jars"/scala-compiler-*.jar "$jars"/scala-library-*.jar "$jars"/scala-reflect-*.jar | tr '\n' ':')
mkdir -p "$out/classes"
runtime=()
for artifact in protobuf-java protobuf-java-util; do
  jar="$HOME/.m2/repository/com/google/protobuf/$artifact/$version/$artifact-$version.jar"
  [ -f "$jar" ] || mvn -q dependency:get -Dartifact="com.google.protobuf:$artifact:$version" -Dtransitive=false
  cp -f "$jar" "$out/$artifact.jar"
  runtime+=("$out/$artifact.jar")
done
classpath="$(ls "$jars"/*.jar | tr '\n' ':')$(IFS=:; echo "${runtime[*]}")"
find "$src" -name '*.scala' > "$out/sources.txt"
java -Xss8m -cp "$scala" scala.tools.nsc.Main -release 17 -encoding UTF-8 -nowarn \
  -classpath "$classpath" -d "$out/classes" @"$out/sources.txt"
jar --create --file "$out/spark-protobuf.jar" -C "$out/classes" .
echo "SPARKFLOW_SPARK_PROTOBUF_JARS=$out/spark-protobuf.jar:$(IFS=:; echo "${runtime[*]}")"
