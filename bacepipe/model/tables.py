"""Constants of random generation (SPEC §8); Tables II and III live in ``data/paper.yaml``."""

#: The three data sets of §IV-A: (name, samples). Jobs draw one uniformly.
DATASETS = (("Alpaca-52k", 52_002), ("WikiText-103", 1_810_000), ("OpenWebText", 8_010_000))

#: Real business electricity rates in $/kWh (GlobalPetrolPrices, as cited by the paper): the paper's
#: eight Table II/Fig. 1 prices, then the UK, US and China rates named in SPEC §8.
PRICE_TABLE = (0.251, 0.156, 0.288, 0.191, 0.222, 0.295, 0.230, 0.291, 0.35, 0.12, 0.08)

#: GPU capacities a random region draws from (§IV-A).
GPU_CHOICES = (16, 32, 64, 128)

#: Range of a random region's bandwidth B_r in Gbit/s (AWS EC2 G4, §IV-A).
BANDWIDTH_RANGE_GBPS = (25.0, 100.0)

#: Places of cloud regions: (lat, lon, UTC offset in hours, standard time). The paper's Table II
#: sites and the AWS regions of the measured WAN table (SPEC §12). Random topologies draw a site
#: per region from this table, which places them for ``latency: geo`` and time-of-use prices.
SITES = {
    "Ireland": (53.35, -6.26, 0.0),
    "New York": (40.71, -74.01, -5.0),
    "Frankfurt": (50.11, 8.68, 1.0),
    "Tokyo": (35.68, 139.69, 9.0),
    "Singapore": (1.35, 103.82, 8.0),
    "Sydney": (-33.87, 151.21, 10.0),
    "Oregon": (45.84, -119.70, -8.0),
    "Virginia": (39.04, -77.49, -5.0),
    "Ohio": (39.96, -83.00, -5.0),
    "Seoul": (37.57, 126.98, 9.0),
    "London": (51.51, -0.13, 0.0),
}

#: $/kWh of the measured AWS regions (SPEC §12): §8's table where the place matches; Seoul has no
#: source and takes Tokyo's rate.
AWS_PRICES = {"Ireland": 0.251, "Frankfurt": 0.288, "Tokyo": 0.191, "Singapore": 0.222,
              "Sydney": 0.295, "Oregon": 0.156, "Virginia": 0.156, "Ohio": 0.156, "London": 0.35,
              "Seoul": 0.191}

#: Time-of-use multipliers by local hour (SPEC §12 ``price_profile``), daily mean exactly 1: a
#: commercial tariff shape with a cheap night (00–07), a flat day (07–17), an evening peak (17–21)
#: and a shoulder (21–24). An assumption of ours, not the paper's.
PRICE_PROFILES = {
    "flat": None,
    "business": (0.7,) * 7 + (1.0,) * 10 + (1.6,) * 4 + (0.9,) * 3,
}
