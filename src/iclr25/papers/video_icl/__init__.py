"""Video In-context Learning: Autoregressive Transformers are Zero-Shot Video Imitators (Zhang,
Guo, He, Zhao, Xu, Bian; ICLR 2025; OpenReview wkbx7BRAsM; arXiv 2407.07356; official code at
aka.ms/vid-icl, not in the search index, so not read).

A VQ tokenizer + decoder-only transformer trained by next-token prediction on continuous clips
only; given [demonstration video ; first frames of a query] it continues the query, and the
paper finds the continuation imitates the demonstration's semantics in the query's unseen
scene. Here the video is synthetic sprite video and the in-context signal is injected by the
data: in corpus B the latent action persists across a hard cut with probability `p`, where the
paper relies on natural video; corpus A (single shots only) is the control. Documentation,
set-up, budgets and results: docs/papers/video_icl.md.

Pilots (session 30, load 2-4 on 2 cores, one torch thread each; not results; the docs page,
"Set-up"): with this geometry a 4-layer d = 64 model (about 200k parameters) continues shots
within 2,000 steps; the cross-cut signal (the second shot's first moving frames become
likelier than the first shot's on clips whose action persists) appears after about 6,000 steps
of 16 clips at p = 0.7 (batch 16 is about 1.7x more sample-efficient than 32; lr 4e-3, a smaller
world, 4-shot videos were not faster). So every model here trains 8,000 steps of 16 clips
(about 8.5 min on one core), and each training corpus is its own experiment.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.video_icl.baselines import (
    evaluate_episode,
    evaluate_episodes,
    oracle_imitate,
    tokenizer_ceiling,
)
from iclr25.papers.video_icl.data import (
    ACTIONS,
    ALL_SCENES,
    BACKGROUNDS,
    COLOURS,
    CONTRAST,
    CORPORA,
    SETTINGS,
    SHAPES,
    Clip,
    Episode,
    Scene,
    Split,
    background_texture,
    concat_clips,
    make_corpus,
    make_episode,
    make_pair_video,
    make_single_shot_video,
    make_split,
    make_two_shot_video,
    render_clip,
    render_frames,
    sprite_mask,
)
from iclr25.papers.video_icl.method import (
    continuation_nll,
    imitate,
    tokenize_corpus,
    tokenize_frames,
    train_video_model,
)
from iclr25.papers.video_icl.metrics import (
    classify_action,
    delta_nll,
    flip_rate,
    imitation_accuracy,
    preference_accuracy,
    psnr,
    ssim,
    step_actions,
    track_background,
    track_clip,
    track_sprite,
)
from iclr25.papers.video_icl.model import VideoGPT
from iclr25.papers.video_icl.pipeline import (
    CHANCE,
    PipelineConfig,
    ceiling,
    evaluate,
    fit_model,
    fit_tokenizer,
    in_shot_accuracy,
    make_episodes,
)
from iclr25.papers.video_icl.tokenizer import (
    VQVAE,
    VectorQuantizer,
    VQOutput,
    codebook_usage,
    train_tokenizer,
)

PAPER = PaperInfo(
    slug="video_icl",
    title="Video In-context Learning: Autoregressive Transformers are Zero-Shot Video Imitators",
    authors="Wentao Zhang, Junliang Guo, Tianyu He, Li Zhao, Linli Xu, Jiang Bian",
    venue="ICLR 2025",
    url="https://arxiv.org/abs/2407.07356",
    code="aka.ms/vid-icl (announced; not in the search index, not read)",
    summary="A VQ tokenizer and a decoder-only transformer trained by next-token prediction on "
    "continuous clips imitate a demonstration video's action in an unseen query scene; here on "
    "synthetic sprite video whose cuts keep the action with probability p.",
)

__all__ = [
    "ACTIONS",
    "ALL_SCENES",
    "BACKGROUNDS",
    "CHANCE",
    "COLOURS",
    "CONTRAST",
    "CORPORA",
    "PAPER",
    "SETTINGS",
    "SHAPES",
    "VQVAE",
    "Clip",
    "Episode",
    "PipelineConfig",
    "Scene",
    "Split",
    "VQOutput",
    "VectorQuantizer",
    "VideoGPT",
    "background_texture",
    "ceiling",
    "classify_action",
    "codebook_usage",
    "concat_clips",
    "continuation_nll",
    "delta_nll",
    "evaluate",
    "evaluate_episode",
    "evaluate_episodes",
    "fit_model",
    "fit_tokenizer",
    "flip_rate",
    "imitate",
    "imitation_accuracy",
    "in_shot_accuracy",
    "make_corpus",
    "make_episode",
    "make_episodes",
    "make_pair_video",
    "make_single_shot_video",
    "make_split",
    "make_two_shot_video",
    "oracle_imitate",
    "preference_accuracy",
    "psnr",
    "render_clip",
    "render_frames",
    "sprite_mask",
    "ssim",
    "step_actions",
    "tokenize_corpus",
    "tokenize_frames",
    "tokenizer_ceiling",
    "track_background",
    "track_clip",
    "track_sprite",
    "train_tokenizer",
    "train_video_model",
]
