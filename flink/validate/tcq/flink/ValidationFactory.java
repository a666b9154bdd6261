package tcq.flink;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.SinkV2Provider;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.SourceProvider;
import org.apache.flink.table.connector.source.abilities.SupportsWatermarkPushDown;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DeserializationFormatFactory;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.factories.SerializationFormatFactory;

/**
 * A stand-in for Flink's Kafka table connector (identifier {@code kafka}) where its jar is
 * not installed, for {@code Runner --validate} only: it takes the options the Kafka
 * connector takes (its required {@code properties.bootstrap.servers}, {@code topic},
 * startup modes, key and value formats and fields, {@code properties.*}), checks them as
 * that connector does, and finds the key and value formats through Flink's own format
 * factories (json, csv), which check their options. The planner then plans the job
 * (schema, watermark, watermark push-down with {@code scan.watermark.idle-timeout}).
 * Nothing reads or writes Kafka: running a job through it fails.
 */
public final class ValidationFactory implements DynamicTableSourceFactory, DynamicTableSinkFactory {
    private static ConfigOption<String> str(String key) {
        return ConfigOptions.key(key).stringType().noDefaultValue();
    }

    static final ConfigOption<String> BOOTSTRAP = str("properties.bootstrap.servers");
    static final ConfigOption<String> GROUP_ID = str("properties.group.id");
    static final ConfigOption<List<String>> TOPIC =
            ConfigOptions.key("topic").stringType().asList().noDefaultValue();
    static final ConfigOption<String> TOPIC_PATTERN = str("topic-pattern");
    static final ConfigOption<String> KEY_FORMAT = str("key.format");
    static final ConfigOption<List<String>> KEY_FIELDS =
            ConfigOptions.key("key.fields").stringType().asList().noDefaultValue();
    static final ConfigOption<String> KEY_FIELDS_PREFIX = str("key.fields-prefix");
    static final ConfigOption<String> VALUE_FORMAT = str("value.format");
    static final ConfigOption<String> VALUE_FIELDS_INCLUDE = str("value.fields-include");
    static final ConfigOption<String> STARTUP_MODE = str("scan.startup.mode");
    static final ConfigOption<Long> STARTUP_TIMESTAMP =
            ConfigOptions.key("scan.startup.timestamp-millis").longType().noDefaultValue();
    static final ConfigOption<String> STARTUP_OFFSETS = str("scan.startup.specific-offsets");
    static final ConfigOption<Duration> DISCOVERY =
            ConfigOptions.key("scan.topic-partition-discovery.interval").durationType().noDefaultValue();
    static final ConfigOption<String> BOUNDED_MODE = str("scan.bounded.mode");
    static final ConfigOption<String> PARTITIONER = str("sink.partitioner");
    static final ConfigOption<Integer> SINK_PARALLELISM =
            ConfigOptions.key("sink.parallelism").intType().noDefaultValue();
    static final ConfigOption<String> DELIVERY = str("sink.delivery-guarantee");
    static final ConfigOption<String> TRANSACTIONAL_ID = str("sink.transactional-id-prefix");

    @Override
    public String factoryIdentifier() {
        return "kafka";
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        Set<ConfigOption<?>> o = new HashSet<>();
        o.add(BOOTSTRAP);
        return o;
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        Set<ConfigOption<?>> o = new HashSet<>();
        o.add(FactoryUtil.FORMAT);
        for (ConfigOption<?> c : new ConfigOption<?>[] {GROUP_ID, TOPIC, TOPIC_PATTERN, KEY_FORMAT,
                KEY_FIELDS, KEY_FIELDS_PREFIX, VALUE_FORMAT, VALUE_FIELDS_INCLUDE, STARTUP_MODE,
                STARTUP_TIMESTAMP, STARTUP_OFFSETS, DISCOVERY, BOUNDED_MODE, PARTITIONER,
                SINK_PARALLELISM, DELIVERY, TRANSACTIONAL_ID}) {
            o.add(c);
        }
        return o;
    }

    /** The checks the Kafka connector makes on its options, common to sources and sinks. */
    private static void check(FactoryUtil.TableFactoryHelper helper) {
        helper.validateExcept("properties.");
        ReadableConfig o = helper.getOptions();
        boolean topic = o.getOptional(TOPIC).isPresent();
        if (topic == o.getOptional(TOPIC_PATTERN).isPresent()) {
            throw new ValidationException("Option 'topic' or 'topic-pattern' must be set, not both.");
        }
        if (o.getOptional(KEY_FIELDS).isPresent() && !o.getOptional(KEY_FORMAT).isPresent()) {
            throw new ValidationException("'key.fields' needs a 'key.format'.");
        }
        String include = o.getOptional(VALUE_FIELDS_INCLUDE).orElse("ALL");
        if (!include.equals("ALL") && !include.equals("EXCEPT_KEY")) {
            throw new ValidationException("'value.fields-include' is ALL or EXCEPT_KEY.");
        }
        String mode = o.getOptional(STARTUP_MODE).orElse("group-offsets");
        switch (mode) {
            case "earliest-offset":
            case "latest-offset":
            case "group-offsets":
                break;
            case "timestamp":
                if (!o.getOptional(STARTUP_TIMESTAMP).isPresent()) {
                    throw new ValidationException(
                            "'scan.startup.timestamp-millis' is required in 'timestamp' startup mode.");
                }
                break;
            case "specific-offsets":
                if (!o.getOptional(STARTUP_OFFSETS).isPresent()) {
                    throw new ValidationException(
                            "'scan.startup.specific-offsets' is required in 'specific-offsets' startup mode.");
                }
                break;
            default:
                throw new ValidationException("Invalid 'scan.startup.mode': " + mode);
        }
    }

    private static ConfigOption<String> valueFormat(FactoryUtil.TableFactoryHelper helper) {
        return helper.getOptions().getOptional(VALUE_FORMAT).isPresent() ? VALUE_FORMAT : FactoryUtil.FORMAT;
    }

    @Override
    public DynamicTableSource createDynamicTableSource(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        helper.discoverOptionalDecodingFormat(DeserializationFormatFactory.class, KEY_FORMAT);
        helper.discoverDecodingFormat(DeserializationFormatFactory.class, valueFormat(helper));
        check(helper);
        return new Source();
    }

    @Override
    public DynamicTableSink createDynamicTableSink(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        helper.discoverOptionalEncodingFormat(SerializationFormatFactory.class, KEY_FORMAT);
        helper.discoverEncodingFormat(SerializationFormatFactory.class, valueFormat(helper));
        check(helper);
        return new Sink();
    }

    /** An append-only scan that takes a pushed-down watermark, as the Kafka source does. */
    static final class Source implements ScanTableSource, SupportsWatermarkPushDown {
        @Override
        public ChangelogMode getChangelogMode() {
            return ChangelogMode.insertOnly();
        }

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
            // Planned, never run: any source completes the plan.
            return SourceProvider.of((org.apache.flink.api.connector.source.Source) new NumberSequenceSource(0, 0));
        }

        @Override
        public void applyWatermark(WatermarkStrategy<RowData> strategy) {}

        @Override
        public DynamicTableSource copy() {
            return new Source();
        }

        @Override
        public String asSummaryString() {
            return "Kafka (validation)";
        }
    }

    /** A sink whose writer refuses to start: the stand-in never writes Kafka. */
    static final class Refuse implements org.apache.flink.api.connector.sink2.Sink<RowData> {
        @Override
        public SinkWriter<RowData> createWriter(WriterInitContext context) {
            throw new UnsupportedOperationException("the Kafka stand-in only validates");
        }
    }

    /** An append-only sink. */
    static final class Sink implements DynamicTableSink {
        @Override
        public ChangelogMode getChangelogMode(ChangelogMode requested) {
            return ChangelogMode.insertOnly();
        }

        @Override
        public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
            // Planned, never run.
            return SinkV2Provider.of(new Refuse());
        }

        @Override
        public DynamicTableSink copy() {
            return new Sink();
        }

        @Override
        public String asSummaryString() {
            return "Kafka (validation)";
        }
    }
}
