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
