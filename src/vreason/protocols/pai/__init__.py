"""PAI-Bench (see README.md here): one package per track — ``g`` (generation), ``c`` (conditional
generation), ``u`` (understanding) — plus the tables they share and their video layout."""

from vreason.core.registry import PackageDeclaration

FRAME_PRESETS = {"pai.g": "fps:2+qwen", "pai.u": "fps:4+qwen"}  # official-code.md §7.2

_P = "vreason.protocols"
DECLARES = PackageDeclaration(
    benchmarks={
        "pai-g": (f"{_P}.pai.g.protocol:PaiGProtocol",
                  "PAI-Bench-G: VBench quality dimensions + yes/no domain questions (judge)"),
        "pai-u": (f"{_P}.pai.u.protocol:PaiUProtocol",
                  "PAI-Bench-U: multiple-choice video understanding; the model under test is --judge"),
        "pai-c": (f"{_P}.pai.c.protocol:PaiCProtocol",
                  "PAI-Bench-C: conditional generation fidelity, quality and diversity"),
    },
    scorers={
        "pai_g_quality": (f"{_P}.pai.g.measure:PaiGQualityScorer", "PAI-Bench-G: quality dimensions"),
        "pai_g_domain": (f"{_P}.pai.g.protocol:PaiGDomainScorer", "PAI-Bench-G: yes/no domain questions (judge)"),
        "pai_u_mcq": (f"{_P}.pai.u.protocol:PaiUMcqScorer", "PAI-Bench-U: multiple-choice answer (model = judge)"),
        "pai_c_fidelity": (f"{_P}.pai.c.scorers:PaiCFidelityScorer", "PAI-C: blur SSIM, Canny F1"),
        "pai_c_depth": (f"{_P}.pai.c.scorers:PaiCDepthScorer", "PAI-C: depth si-RMSE"),
        "pai_c_seg": (f"{_P}.pai.c.scorers:PaiCSegScorer", "PAI-C: segmentation mIoU / recall"),
        "pai_c_dover": (f"{_P}.pai.c.scorers:PaiCDoverScorer", "PAI-C: DOVER technical score"),
        "pai_c_diversity": (f"{_P}.pai.c.scorers:PaiCDiversityScorer", "PAI-C: Diversity-LPIPS"),
    },
    layouts={"pai": f"{_P}.pai.layout:LAYOUT"},
    frame_presets=FRAME_PRESETS,
    mock_replies=("vreason.protocols.pai.mock:MOCK_REPLIES", "pai_g_vqa, pai_u_mcq"),
    templates=(f"{_P}.pai.g", f"{_P}.pai.u"),
)
